//! The target kinds made from scratch: loop-image filesystems and tmpfs; and `dir:`, an
//! existing directory. FUSE targets are in `fuse.rs`, block devices in `device.rs`. Each
//! creates a resource first (never adopting an existing one), then records it.

use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::requirements::{self as req, Requirement};
use crate::safefs;
use crate::state::Resource;
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::units::format_iec;
use fsarena_core::{InputError, Spec};
use std::path::{Path, PathBuf};

/// Filesystems made on a loop image.
pub const LOOP_KINDS: [&str; 7] = ["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "nilfs2"];

/// The smallest image each mkfs accepts with its default options, measured by running it on
/// sparse files (e2fsprogs 1.47, xfsprogs 6.1, btrfs-progs 6.2, f2fs-tools 1.15, nilfs-utils
/// 2.2), rounded up to a whole MiB (ext: 128 KiB), and the tool's reason.
pub fn minimum_size(fs: &str) -> (u64, &'static str) {
    const MIB: u64 = 1 << 20;
    match fs {
        // mke2fs needs ~104 KiB for the superblock, inode table and journal.
        "ext2" | "ext3" | "ext4" => (128 << 10, "mke2fs cannot fit its metadata in less"),
        // xfsprogs >= 5.19 refuses filesystems smaller than 300 MiB.
        "xfs" => (300 * MIB, "mkfs.xfs refuses smaller filesystems"),
        // "minimum size for each btrfs device is 114294784" (109 MiB) with the default profile.
        "btrfs" => (109 * MIB, "mkfs.btrfs refuses smaller devices"),
        // mkfs.f2fs fails below 52 MiB (54525952 bytes).
        "f2fs" => (52 * MIB, "mkfs.f2fs cannot fit its segments in less"),
        // mkfs.nilfs2: "required size=134221824 bytes" (128 MiB + 4 KiB).
        "nilfs2" => (129 * MIB, "mkfs.nilfs2 refuses smaller devices"),
        _ => (1, "a size must be more than 0"),
    }
}

/// Refuses `size` for `fs` when its mkfs cannot make a filesystem that small.
pub(crate) fn check_minimum(kind: &str, fs: &str, size: u64, what: &str) -> Result<(), InputError> {
    let (min, why) = minimum_size(fs);
    if size < min {
        return Err(InputError::new(format!(
            "{kind}: {what}{} is too small for {fs}: it needs at least {} ({why})",
            format_iec(size as f64),
            format_iec(min as f64)
        )));
    }
    Ok(())
}

/// The flag that makes each mkfs overwrite without asking (only ever on fsarena's own image
/// or a device given with --force), and keeps it quiet.
fn mkfs_args(fs: &str) -> [&'static str; 2] {
    match fs {
        "ext2" | "ext3" | "ext4" => ["-F", "-q"],
        _ => ["-f", "-q"],
    }
}

fn mkfs_version_flag(fs: &str) -> &'static str {
    match fs {
        "btrfs" => "--version",
        _ => "-V",
    }
}

/// Runs mkfs on `dest`, recording the command line and the tool's version.
pub(crate) fn make_filesystem(p: &mut Provisioned, fs: &str, extra: &[String], dest: &Path) -> Result<(), TargetError> {
    let program = format!("mkfs.{fs}");
    let mut args: Vec<String> = mkfs_args(fs).iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().cloned());
    args.push(dest.to_string_lossy().into_owned());
    p.fact("mkfs", format!("{program} {}", args.join(" ")));
    p.fact("mkfs_version", sys::tool_version(&program, mkfs_version_flag(fs)));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    sys::run(&program, &refs)?;
    Ok(())
}

/// Mounts `source` at `mnt` (fsarena's own, new, empty directory), then records the mount.
pub(crate) fn mount(
    p: &mut Provisioned,
    fstype: &str,
    source: &str,
    options: &str,
    mnt: &Path,
) -> Result<(), TargetError> {
    let mnt_s = mnt.to_string_lossy();
    let mut args = vec!["-t", fstype];
    if !options.is_empty() {
        args.extend(["-o", options]);
    }
    args.extend([source, &mnt_s]);
    let mounted = sys::run("mount", &args);
    // Recorded even when mount(8) reports a failure after mounting (a failing helper).
    if sys::mount_at(mnt).is_some() {
        p.add_mount(mnt, false)?;
    }
    mounted.map(|_| ())
}

pub(crate) fn workdir_facts(p: &mut Provisioned, workdir: &Path) {
    if let Some(m) = sys::mounts()
        .into_iter()
        .filter(|m| workdir.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
    {
        p.fact("workdir", format!("{} ({} on {})", workdir.display(), m.fstype, m.source));
    }
}

/// Creates a sparse image of `size` bytes at `path` (a new file), records it.
pub(crate) fn create_image(p: &mut Provisioned, path: PathBuf, size: u64) -> Result<PathBuf, TargetError> {
    let (file, path) = p.make_file(path)?;
    file.set_len(size).map_err(|e| TargetError(format!("cannot size {}: {e}", path.display())))?;
    Ok(path)
}

/// `ext4`, `xfs`, ...: a sparse image in the work directory, mkfs, a loop device with direct
/// I/O to the backing file, a mount.
#[derive(Debug, Clone)]
pub struct LoopTarget {
    fs: &'static str,
    common: CommonOptions,
    loop_dio: bool,
}

impl LoopTarget {
    /// From `ext4[:size=,mkfs=,mount=,loop_dio=,label=]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        let fs =
            LOOP_KINDS.iter().copied().find(|k| *k == spec.kind).ok_or_else(|| {
                InputError::new(format!("'{}' is not a loop kind: {}", spec.kind, LOOP_KINDS.join(", ")))
            })?;
        let common = CommonOptions::parse(spec, text, &["size", "mkfs", "mount", "loop_dio"])?;
        let loop_dio = match spec.get("loop_dio") {
            None | Some("1") => true,
            Some("0") => false,
            Some(v) => return Err(InputError::new(format!("{fs}: loop_dio={v}: expected 1 or 0"))),
        };
        check_minimum(fs, fs, common.size, "size=")?;
        Ok(Self { fs, common, loop_dio })
    }
}

impl Target for LoopTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        self.fs
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        vec![Requirement::Root, Requirement::KernelFs(req::kernel_name(self.fs)), req::mkfs_tool(self.fs), req::LOSETUP]
    }
    fn image_bytes(&self) -> u64 {
        self.common.size
    }
    fn capacity_bytes(&self) -> Option<u64> {
        Some(self.common.size)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let mnt = p.make_dir(ctx.path(&format!("mnt-{}-{}", ctx.index, self.fs)), false)?;
            p.root = mnt.clone();
            let image = ctx.path(&format!("image-{}-{}.img", ctx.index, self.fs));
            let image = create_image(&mut p, image, self.common.size)?;
            let image_id = safefs::Identity::of_path(&image).map_err(|e| TargetError(e.to_string()))?;
            p.fact("kind", self.fs);
            p.fact("image", format!("{} ({} bytes, sparse)", image.display(), self.common.size));
            workdir_facts(&mut p, ctx.workdir.path());
            make_filesystem(&mut p, self.fs, &self.common.mkfs, &image)?;
            let image_s = image.to_string_lossy();
            let mut args = vec!["--find", "--show"];
            if self.loop_dio {
                args.push("--direct-io=on");
            }
            args.push(&image_s);
            let dev = sys::run("losetup", &args)?;
            p.add(Resource::Loop { device: PathBuf::from(&dev), image: image.clone(), image_id })?;
            p.fact(
                "loop_device",
                format!("{dev} (direct I/O to the image {})", if self.loop_dio { "on" } else { "off" }),
            );
            mount(&mut p, self.fs, &dev, &self.common.mount, &mnt)
        })();
        p.finish(built)
    }
}

/// `tmpfs[:size=,mount=]`, mounted by fsarena.
#[derive(Debug, Clone)]
pub struct TmpfsTarget {
    common: CommonOptions,
}

impl TmpfsTarget {
    /// From `tmpfs[:size=,mount=,label=]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        Ok(Self { common: CommonOptions::parse(spec, text, &["size", "mount"])? })
    }
}

impl Target for TmpfsTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        "tmpfs"
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        vec![Requirement::Root, Requirement::KernelFs("tmpfs")]
    }
    fn capacity_bytes(&self) -> Option<u64> {
        Some(self.common.size)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let mnt = p.make_dir(ctx.path(&format!("mnt-{}-tmpfs", ctx.index)), false)?;
            p.root = mnt.clone();
            p.fact("kind", "tmpfs");
            let mut options = format!("size={}", self.common.size);
            if !self.common.mount.is_empty() {
                options = format!("{options},{}", self.common.mount);
            }
            mount(&mut p, "tmpfs", "fsarena-tmpfs", &options, &mnt)
        })();
        p.finish(built)
    }
}

/// `dir:path=PATH`: an existing directory, never formatted or unmounted; workloads work in a
/// fresh subdirectory `fsarena-RUNID-N` that is recorded, so that teardown removes it (when
/// empty) and `cleanup` after a killed run removes it with the files written in it.
#[derive(Debug, Clone)]
pub struct DirTarget {
    common: CommonOptions,
    path: PathBuf,
}

impl DirTarget {
    /// From `dir:path=...[,label=...]`; a relative path is taken against the current directory.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        let common = CommonOptions::parse(spec, text, &["path"])?;
        let given =
            spec.get("path").ok_or_else(|| InputError::new("target dir needs path=, e.g. dir:path=/mnt/nfs"))?;
        let path = std::path::absolute(given)
            .map_err(|e| InputError::new(format!("dir:path={given}: {e}: expected an existing directory")))?;
        if !path.is_dir() {
            return Err(InputError::new(format!("dir:path={given}: not an existing directory")));
        }
        Ok(Self { common, path })
    }
}

impl Target for DirTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        "dir"
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        Vec::new()
    }
    fn capacity_bytes(&self) -> Option<u64> {
        // A filesystem that reports no size at all (ramfs, some FUSE and network
        // filesystems) has an unknown capacity, not a zero one.
        sys::free_bytes(&self.path)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let work = self.path.join(format!("fsarena-{}-{}", ctx.workdir.run_id(), ctx.index));
            let id = safefs::create_new_dir(&work, 0o700)
                .map_err(|e| TargetError(format!("cannot create {}: {e}", work.display())))?;
            p.add(Resource::Scratch { path: work.clone(), id })?;
            p.fact("kind", "dir");
            p.fact("path", self.path.display().to_string());
            p.root = work;
            Ok(())
        })();
        p.finish(built)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn images_too_small_for_their_mkfs_are_refused_when_parsed() {
        for (spec, ok) in [
            ("xfs:size=299m", false),
            ("xfs:size=300m", true),
            ("btrfs:size=108m", false),
            ("btrfs:size=109m", true),
            ("f2fs:size=51m", false),
            ("nilfs2:size=128m", false),
            ("nilfs2:size=129m", true),
            ("ext2:size=64k", false),
            ("ext4:size=128k", true),
            ("fuse2fs:size=64k", false),
            ("tmpfs:size=0", false),
            ("tmpfs:size=1k", true),
        ] {
            match crate::parse(spec, false) {
                Ok(_) => assert!(ok, "{spec} was accepted"),
                Err(e) => {
                    assert!(!ok, "{spec}: {e}");
                    assert!(e.to_string().contains("at least") || spec.starts_with("tmpfs"), "{spec}: {e}");
                }
            }
        }
    }
}
