//! Every target kind and every filesystem fsarena makes, each described once: `parse`,
//! `fsarena targets`, the requirements and mkfs's arguments all read these tables, so a new
//! kind is one row here and one module, and nothing falls back to a default kind.

use crate::requirements::{Requirement, FUSE2FS, FUSERMOUNT, GLUSTER, GLUSTERD, HOSTNAME, LOSETUP, MOUNT_GLUSTERFS};
use crate::{DeviceTarget, DirTarget, FuseTarget, GlusterTarget, LoopTarget, Target, TmpfsTarget};
use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::OptionDoc;
use fsarena_core::option::ValueKind::{Bool, Choice, CommandLine, Count, Size, Text, Time};
use fsarena_core::{InputError, Spec};

const MIB: u64 = 1 << 20;

/// A filesystem fsarena makes with its mkfs: on a loop image, on a device, or inside fuse2fs.
#[derive(Debug)]
pub struct Filesystem {
    /// Its name: the target kind, `fs=`, and the kernel's name in /proc/filesystems.
    pub name: &'static str,
    /// The mkfs program.
    pub mkfs: &'static str,
    /// The Debian package that has it.
    pub package: &'static str,
    /// The flag that makes mkfs overwrite without asking (only ever on fsarena's own image or
    /// a device given with --force).
    pub overwrite: &'static str,
    /// The flag that makes mkfs print its version.
    pub version_flag: &'static str,
    /// The smallest size its mkfs accepts with default options, measured by running it on
    /// sparse files (e2fsprogs 1.47, xfsprogs 6.1, btrfs-progs 6.2, f2fs-tools 1.15,
    /// nilfs-utils 2.2) and rounded up to a whole MiB (ext: 128 KiB).
    pub minimum: u64,
    /// The tool's reason for that minimum.
    pub minimum_why: &'static str,
}

impl Filesystem {
    /// Its mkfs, as a requirement naming the package.
    pub fn mkfs_requirement(&self) -> Requirement {
        Requirement::Tool { program: self.mkfs, package: self.package }
    }
}

const fn ext(name: &'static str, mkfs: &'static str) -> Filesystem {
    Filesystem {
        name,
        mkfs,
        package: "e2fsprogs",
        overwrite: "-F",
        version_flag: "-V",
        // mke2fs needs ~104 KiB for the superblock, inode table and journal.
        minimum: 128 << 10,
        minimum_why: "mke2fs cannot fit its metadata in less",
    }
}

/// The filesystems made on loop images and devices.
pub const FILESYSTEMS: [Filesystem; 7] = [
    ext("ext2", "mkfs.ext2"),
    ext("ext3", "mkfs.ext3"),
    ext("ext4", "mkfs.ext4"),
    Filesystem {
        name: "xfs",
        mkfs: "mkfs.xfs",
        package: "xfsprogs",
        overwrite: "-f",
        version_flag: "-V",
        minimum: 300 * MIB,
        minimum_why: "mkfs.xfs refuses smaller filesystems",
    },
    Filesystem {
        name: "btrfs",
        mkfs: "mkfs.btrfs",
        package: "btrfs-progs",
        overwrite: "-f",
        version_flag: "--version",
        // "minimum size for each btrfs device is 114294784" with the default profile.
        minimum: 109 * MIB,
        minimum_why: "mkfs.btrfs refuses smaller devices",
    },
    Filesystem {
        name: "f2fs",
        mkfs: "mkfs.f2fs",
        package: "f2fs-tools",
        overwrite: "-f",
        version_flag: "-V",
        // mkfs.f2fs fails below 54525952 bytes.
        minimum: 52 * MIB,
        minimum_why: "mkfs.f2fs cannot fit its segments in less",
    },
    Filesystem {
        name: "nilfs2",
        mkfs: "mkfs.nilfs2",
        package: "nilfs-tools",
        overwrite: "-f",
        version_flag: "-V",
        // "required size=134221824 bytes" (128 MiB + 4 KiB).
        minimum: 129 * MIB,
        minimum_why: "mkfs.nilfs2 refuses smaller devices",
    },
];

/// The filesystem called `name`, if fsarena makes it.
pub fn filesystem(name: &str) -> Option<&'static Filesystem> {
    FILESYSTEMS.iter().find(|f| f.name == name)
}

/// The names of [`FILESYSTEMS`], for messages.
pub fn filesystem_names() -> String {
    FILESYSTEMS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// What a kind needs from the machine before any of its targets can be provisioned.
#[derive(Debug, Clone, Copy)]
pub enum Needs {
    /// A loop image with this filesystem: root, the kernel's filesystem, its mkfs, losetup.
    Loop(&'static Filesystem),
    /// tmpfs: root and the kernel's tmpfs.
    Tmpfs,
    /// fuse2fs: FUSE, fusermount3, fuse2fs and mke2fs.
    Fuse2fs,
    /// Any FUSE command: FUSE and fusermount3.
    Fuse,
    /// An existing directory: nothing.
    Nothing,
    /// A block device: root (the filesystem's own needs depend on `fs=`).
    Device,
    /// A GlusterFS volume: loop-backed xfs bricks, glusterd, the CLI, FUSE clients.
    Gluster,
    /// A GlusterFS volume served from other hosts: FUSE clients only.
    GlusterClient,
}

impl Needs {
    /// The requirements, in the order they are checked.
    pub fn requirements(self) -> Vec<Requirement> {
        let fuse = [Requirement::Root, Requirement::KernelFs("fuse"), Requirement::DevFuse, FUSERMOUNT];
        match self {
            Needs::Loop(fs) => vec![Requirement::Root, Requirement::KernelFs(fs.name), fs.mkfs_requirement(), LOSETUP],
            Needs::Tmpfs => vec![Requirement::Root, Requirement::KernelFs("tmpfs")],
            Needs::Fuse2fs => {
                let mut r = fuse.to_vec();
                // fuse2fs's image is made by mke2fs (FILESYSTEMS[2] is ext4).
                r.extend([FUSE2FS, FILESYSTEMS[2].mkfs_requirement()]);
                r
            }
            Needs::Fuse => fuse.to_vec(),
            Needs::Nothing => Vec::new(),
            Needs::Device => vec![Requirement::Root],
            Needs::Gluster => {
                let mut r = fuse.to_vec();
                // FILESYSTEMS[3] is xfs, the bricks' filesystem.
                r.extend([
                    Requirement::KernelFs("xfs"),
                    FILESYSTEMS[3].mkfs_requirement(),
                    LOSETUP,
                    GLUSTERD,
                    GLUSTER,
                    MOUNT_GLUSTERFS,
                    HOSTNAME,
                ]);
                r
            }
            Needs::GlusterClient => {
                let mut r = fuse.to_vec();
                r.push(MOUNT_GLUSTERFS);
                r
            }
        }
    }
}

// The keys of target specs, each described once; a kind lists the ones it accepts, and a
// test checks each list against what the kind's parser accepts.

const LABEL: OptionDoc = OptionDoc::new("label", Text, Derived("the spec as given"), "the name shown in reports");
const IMAGE_SIZE: OptionDoc = OptionDoc::new(
    "size",
    Size,
    Is("4g"),
    "size of the image, a sparse file in the work directory; at least what the filesystem's mkfs accepts",
);
const TMPFS_SIZE: OptionDoc = OptionDoc::new("size", Size, Is("4g"), "size of the tmpfs");
const MKFS: OptionDoc = OptionDoc::new(
    "mkfs",
    Text,
    Unset,
    "extra mkfs arguments after the filesystem's defaults, quoted: mkfs='-O ^has_journal'",
);
const MOUNT: OptionDoc = OptionDoc::new(
    "mount",
    Text,
    Unset,
    "extra mount options after the kernel's defaults, quoted: mount='noatime,data=writeback' (fuse2fs: passed as -o after allow_other,default_permissions)",
);
const LOOP_DIO: OptionDoc = OptionDoc::new(
    "loop_dio",
    Bool,
    Is("1"),
    "the loop device does direct I/O to the image (losetup --direct-io=on), so the host's page cache does not hold it",
);
const FUSE2FS_FS: OptionDoc =
    OptionDoc::new("fs", Choice(&["ext2", "ext3", "ext4"]), Is("ext4"), "the filesystem of the image fuse2fs serves");
const DEVICE_FS: OptionDoc = OptionDoc::new(
    "fs",
    Choice(&["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "nilfs2"]),
    Unset,
    "the filesystem made on the device (required)",
);
const CMD: OptionDoc = OptionDoc::new(
    "cmd",
    CommandLine,
    Unset,
    "the command that mounts the filesystem at {mnt}, run through sh -c; {mnt} and {work} (a private scratch directory) are substituted shell-quoted, so write them bare (required)",
);
const TIMEOUT: OptionDoc =
    OptionDoc::new("timeout", Time, Is("30s"), "how long cmd may take until {mnt} is a mount point; then it is ended");
const DIR_PATH: OptionDoc = OptionDoc::new(
    "path",
    Text,
    Unset,
    "the existing directory or mount (required); never formatted or unmounted, workloads run in a fresh subdirectory; A:B:... names several client mounts of one shared filesystem (io clients=, MPI ranks use them in turn)",
);
const DEVICE_PATH: OptionDoc = OptionDoc::new("path", Text, Unset, "the block device, e.g. /dev/nvme0n1 (required)");

const BRICKS: OptionDoc = OptionDoc::new(
    "bricks",
    Count,
    Derived("replica= or disperse=, else 1"),
    "the number of bricks, each a sparse image with xfs on a loop device",
);
const REPLICA: OptionDoc =
    OptionDoc::new("replica", Count, Unset, "keep every file on this many bricks (at least 2, dividing bricks=)");
const DISPERSE: OptionDoc = OptionDoc::new(
    "disperse",
    Count,
    Unset,
    "erasure-code each file over this many bricks (at least 3; bricks= a multiple of it)",
);
const REDUNDANCY: OptionDoc = OptionDoc::new(
    "redundancy",
    Count,
    Is("1"),
    "with disperse=: bricks that may be lost, less than half of disperse=",
);
const BRICK_SIZE: OptionDoc =
    OptionDoc::new("size", Size, Is("1g"), "size of each brick's image (sparse); at least 300m, mkfs.xfs's minimum");
const CLIENTS: OptionDoc = OptionDoc::new(
    "clients",
    Count,
    Is("1"),
    "FUSE mounts of the volume, each its own glusterfs client process with its own caches; workloads run on the first",
);

const SERVERS: OptionDoc = OptionDoc::new(
    "servers",
    Text,
    Unset,
    "hosts serving a volume fsarena does not make (with volume=): no glusterd, no brick, only clients= mounts on each host that runs ranks; several quoted, servers='srv1,srv2', asked in turn",
);
const VOLUME: OptionDoc =
    OptionDoc::new("volume", Text, Unset, "with servers=: the name of the volume they serve, mounted as is");

const RECORD: OptionDoc = OptionDoc::new(
    "record",
    Bool,
    Is("0"),
    "run on fsarena's crash recorder: the loop device's image is a file on fsarena's own FUSE mount, every write and flush logged (ext2/3/4, xfs, btrfs; the log holds at most 2 GiB), to measure what recording costs",
);
const LOOP_KEYS: &[OptionDoc] = &[IMAGE_SIZE, MKFS, MOUNT, LOOP_DIO, RECORD, LABEL];

/// Parses a spec of one kind: the spec, the text as given, and `--force`.
type ParseFn = fn(&Spec, &str, bool) -> Result<Box<dyn Target>, InputError>;

/// A target kind.
#[derive(Debug)]
pub struct Kind {
    /// What `--target` starts with.
    pub name: &'static str,
    /// One line for `fsarena targets` and the docs.
    pub summary: &'static str,
    /// What it needs from this machine.
    pub needs: Needs,
    /// The keys its spec accepts, `label` last.
    pub keys: &'static [OptionDoc],
    parse: ParseFn,
}

fn parse_loop(spec: &Spec, text: &str, _force: bool) -> Result<Box<dyn Target>, InputError> {
    Ok(Box::new(LoopTarget::from_spec(spec, text)?))
}
fn parse_tmpfs(spec: &Spec, text: &str, _force: bool) -> Result<Box<dyn Target>, InputError> {
    Ok(Box::new(TmpfsTarget::from_spec(spec, text)?))
}
fn parse_fuse(spec: &Spec, text: &str, _force: bool) -> Result<Box<dyn Target>, InputError> {
    Ok(Box::new(FuseTarget::from_spec(spec, text)?))
}
fn parse_dir(spec: &Spec, text: &str, _force: bool) -> Result<Box<dyn Target>, InputError> {
    Ok(Box::new(DirTarget::from_spec(spec, text)?))
}
fn parse_gluster(spec: &Spec, text: &str, _force: bool) -> Result<Box<dyn Target>, InputError> {
    Ok(Box::new(GlusterTarget::from_spec(spec, text)?))
}
fn parse_device(spec: &Spec, text: &str, force: bool) -> Result<Box<dyn Target>, InputError> {
    Ok(Box::new(DeviceTarget::from_spec(spec, text, force)?))
}

const fn on_loop(fs: &'static Filesystem) -> Kind {
    Kind {
        name: fs.name,
        summary: "its mkfs on a sparse image in the work directory, on a loop device",
        needs: Needs::Loop(fs),
        keys: LOOP_KEYS,
        parse: parse_loop,
    }
}

/// Every target kind, in the order `fsarena targets` lists them.
pub const TARGET_KINDS: [Kind; 13] = [
    on_loop(&FILESYSTEMS[0]),
    on_loop(&FILESYSTEMS[1]),
    on_loop(&FILESYSTEMS[2]),
    on_loop(&FILESYSTEMS[3]),
    on_loop(&FILESYSTEMS[4]),
    on_loop(&FILESYSTEMS[5]),
    on_loop(&FILESYSTEMS[6]),
    Kind {
        name: "tmpfs",
        summary: "a tmpfs mounted by fsarena",
        needs: Needs::Tmpfs,
        keys: &[TMPFS_SIZE, MOUNT, LABEL],
        parse: parse_tmpfs,
    },
    Kind {
        name: "fuse2fs",
        summary: "an ext2/3/4 image mounted through FUSE by fuse2fs",
        needs: Needs::Fuse2fs,
        keys: &[FUSE2FS_FS, IMAGE_SIZE, MKFS, MOUNT, LABEL],
        parse: parse_fuse,
    },
    Kind {
        name: "fuse",
        summary: "any FUSE filesystem started by cmd=",
        needs: Needs::Fuse,
        keys: &[CMD, TIMEOUT, LABEL],
        parse: parse_fuse,
    },
    Kind {
        name: "dir",
        summary: "an existing directory or mount, never formatted",
        needs: Needs::Nothing,
        keys: &[DIR_PATH, LABEL],
        parse: parse_dir,
    },
    Kind {
        name: "device",
        summary: "a real block device, formatted only with --force",
        needs: Needs::Device,
        keys: &[DEVICE_PATH, DEVICE_FS, MKFS, MOUNT, LABEL],
        parse: parse_device,
    },
    Kind {
        name: "glusterfs",
        summary:
            "a GlusterFS volume on loop-backed xfs bricks with fsarena's own glusterd, or served from other hosts (servers=, volume=); one FUSE mount per client",
        needs: Needs::Gluster,
        keys: &[BRICKS, REPLICA, DISPERSE, REDUNDANCY, BRICK_SIZE, CLIENTS, SERVERS, VOLUME, LABEL],
        parse: parse_gluster,
    },
];

/// The kind called `name`.
pub fn kind(name: &str) -> Option<&'static Kind> {
    TARGET_KINDS.iter().find(|k| k.name == name)
}

/// The names of [`TARGET_KINDS`], for messages.
pub fn kind_names() -> String {
    TARGET_KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// Parses and checks a `--target` spec, without side effects. `force` is `--force`.
pub fn parse(text: &str, force: bool) -> Result<Box<dyn Target>, InputError> {
    let spec = Spec::parse(text)?;
    let kind = kind(&spec.kind).ok_or_else(|| {
        InputError::new(format!("unknown target kind '{}': accepted kinds are {}", spec.kind, kind_names()))
    })?;
    (kind.parse)(&spec, text, force)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_to_itself_and_every_loop_kind_has_its_filesystem() {
        let dir = std::env::temp_dir();
        for kind in &TARGET_KINDS {
            let text = match kind.name {
                "fuse" => "fuse:cmd='fuse2fs -f img {mnt}'".to_string(),
                "dir" => format!("dir:path={}", dir.display()),
                // A device spec without --force is refused before the path is looked at.
                "device" => "device:path=/dev/null,fs=ext4".to_string(),
                name => format!("{name}:size=1g"),
            };
            match (kind.name, parse(&text, false)) {
                ("device", Err(e)) => assert!(e.to_string().contains("--force"), "{e}"),
                (name, Ok(target)) => assert_eq!(target.kind(), name, "{text}"),
                (name, Err(e)) => panic!("{name}: {text}: {e}"),
            }
            if let Needs::Loop(fs) = kind.needs {
                assert_eq!(fs.name, kind.name);
                assert_eq!(fs.mkfs, format!("mkfs.{}", fs.name));
            }
        }
        let names: Vec<&str> = TARGET_KINDS.iter().map(|k| k.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a kind is listed twice: {names:?}");
    }

    #[test]
    fn each_kind_lists_exactly_the_keys_its_parser_accepts() {
        for kind in &TARGET_KINDS {
            let e = parse(&format!("{}:zzzz=1", kind.name), true).err().map(|e| e.to_string()).unwrap_or_default();
            let listed: Vec<&str> = kind.keys.iter().map(|k| k.name).collect();
            let accepted = e.split("accepted keys are ").nth(1).unwrap_or_default();
            assert_eq!(accepted, listed.join(", "), "{}: {e}", kind.name);
            assert!(kind.keys.iter().all(|k| !k.doc.is_empty()), "{}", kind.name);
        }
        for size in [IMAGE_SIZE, TMPFS_SIZE] {
            assert_eq!(fsarena_core::units::parse_size(size.default.shown()), Ok(crate::common::DEFAULT_SIZE));
        }
        let names: Vec<&str> = FILESYSTEMS.iter().map(|f| f.name).collect();
        let Choice(device_fs) = DEVICE_FS.value else { panic!("device fs= is a choice") };
        assert_eq!(device_fs, names, "device fs= names every filesystem fsarena makes");
    }

    #[test]
    fn an_unknown_kind_is_refused_never_taken_for_another() {
        for text in ["zfs", "ext5:size=1g", "EXT4", "fuse3:cmd='x {mnt}'", "loop"] {
            let e = parse(text, true).unwrap_err().to_string();
            assert!(e.contains("unknown target kind") && e.contains("ext4, xfs"), "{text}: {e}");
        }
    }
}
