//! The target kinds made from scratch: loop-image filesystems and tmpfs. `dir:`, an existing
//! directory, is in `dir.rs`, FUSE targets in `fuse.rs`, block devices in `device.rs`. Each
//! creates a resource first (never adopting an existing one), then records it.

use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::requirements::Requirement;
use crate::safefs;
use crate::state::Resource;
use crate::table::{filesystem, filesystem_names, Filesystem, Needs};
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::units::format_iec;
use fsarena_core::{InputError, Spec};
use std::path::{Path, PathBuf};

/// Refuses `size` for `fs` when its mkfs cannot make a filesystem that small.
pub(crate) fn check_minimum(kind: &str, fs: &Filesystem, size: u64, what: &str) -> Result<(), InputError> {
    if size < fs.minimum {
        return Err(InputError::new(format!(
            "{kind}: {what}{} is too small for {}: it needs at least {} ({})",
            format_iec(size as f64),
            fs.name,
            format_iec(fs.minimum as f64),
            fs.minimum_why
        )));
    }
    Ok(())
}

/// Runs mkfs on `dest`, recording the command line and the tool's version.
pub(crate) fn make_filesystem(
    p: &mut Provisioned,
    fs: &Filesystem,
    extra: &[String],
    dest: &Path,
) -> Result<(), TargetError> {
    // Quiet, and overwriting without asking: only ever fsarena's own image or a --force device.
    let mut args: Vec<String> = vec![fs.overwrite.to_string(), "-q".to_string()];
    args.extend(extra.iter().cloned());
    args.push(dest.to_string_lossy().into_owned());
    p.fact("mkfs", format!("{} {}", fs.mkfs, args.join(" ")));
    p.fact("mkfs_version", sys::tool_version(fs.mkfs, fs.version_flag));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    sys::run(fs.mkfs, &refs)?;
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
    fs: &'static Filesystem,
    common: CommonOptions,
    loop_dio: bool,
    record: bool,
}

impl LoopTarget {
    /// From `ext4[:size=,mkfs=,mount=,loop_dio=,label=]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        let fs = filesystem(&spec.kind).ok_or_else(|| {
            InputError::new(format!("'{}' is not made on a loop image: {}", spec.kind, filesystem_names()))
        })?;
        let common = CommonOptions::parse(spec, text, &["size", "mkfs", "mount", "loop_dio", "record"])?;
        let record = match spec.get("record") {
            None | Some("0") => false,
            Some("1") if crate::recorder::RECORDABLE.contains(&fs.name) => true,
            Some("1") => {
                return Err(InputError::new(format!(
                    "{}: record=1: the recorder records {}",
                    fs.name,
                    crate::recorder::RECORDABLE.join(", ")
                )))
            }
            Some(v) => return Err(InputError::new(format!("{}: record={v}: expected 1 or 0", fs.name))),
        };
        let loop_dio = match spec.get("loop_dio") {
            None | Some("1") => true,
            Some("0") => false,
            Some(v) => return Err(InputError::new(format!("{}: loop_dio={v}: expected 1 or 0", fs.name))),
        };
        check_minimum(fs.name, fs, common.size, "size=")?;
        Ok(Self { fs, common, loop_dio, record })
    }
}

impl Target for LoopTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        self.fs.name
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        Needs::Loop(self.fs).requirements()
    }
    fn image_bytes(&self) -> u64 {
        self.common.size
    }
    fn capacity_bytes(&self) -> Option<u64> {
        Some(self.common.size)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        if self.record {
            return crate::recorder::Recorded::provision(ctx, self.fs.name, &self.common);
        }
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let mnt = p.make_dir(ctx.mount_path(&format!("mnt-{}-{}", ctx.index, self.fs.name)), false)?;
            p.root = mnt.clone();
            let image = ctx.path(&format!("image-{}-{}.img", ctx.index, self.fs.name));
            let image = create_image(&mut p, image, self.common.size)?;
            let image_id = safefs::Identity::of_path(&image).map_err(|e| TargetError(e.to_string()))?;
            p.fact("kind", self.fs.name);
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
            mount(&mut p, self.fs.name, &dev, &self.common.mount, &mnt)?;
            p.remount = Some((self.fs.name.to_string(), dev, self.common.mount.clone()));
            Ok(())
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
        Needs::Tmpfs.requirements()
    }
    fn capacity_bytes(&self) -> Option<u64> {
        Some(self.common.size)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let mnt = p.make_dir(ctx.mount_path(&format!("mnt-{}-tmpfs", ctx.index)), false)?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn record_is_for_the_filesystems_the_recorder_records() {
        assert!(crate::parse("ext4:record=1", false).is_ok());
        assert!(crate::parse("btrfs:record=0", false).is_ok());
        let e = crate::parse("f2fs:record=1", false).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("the recorder records ext2, ext3, ext4, xfs, btrfs"), "{e}");
        let e = crate::parse("ext4:record=yes", false).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("record=yes: expected 1 or 0"), "{e}");
    }

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
