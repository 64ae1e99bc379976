//! The target kinds: loop-image filesystems, tmpfs, fuse2fs, any FUSE command, an existing
//! directory, a block device. Each records a resource before creating it.

use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::requirements::{self as req, Requirement};
use crate::state::Resource;
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::{InputError, Spec};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Filesystems made on a loop image.
pub const LOOP_KINDS: [&str; 7] = ["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "nilfs2"];

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
fn make_filesystem(p: &mut Provisioned, fs: &str, extra: &[String], dest: &Path) -> Result<(), TargetError> {
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

fn mount(
    p: &mut Provisioned,
    ctx: &ProvisionCtx<'_>,
    fstype: &str,
    source: &str,
    options: &str,
    mnt: &Path,
) -> Result<(), TargetError> {
    p.add(ctx, Resource::Mount { path: mnt.to_path_buf(), fuse: false })?;
    let mnt_s = mnt.to_string_lossy();
    let mut args = vec!["-t", fstype];
    if !options.is_empty() {
        args.extend(["-o", options]);
    }
    args.extend([source, &mnt_s]);
    sys::run("mount", &args)?;
    Ok(())
}

fn workdir_facts(p: &mut Provisioned, workdir: &Path) {
    if let Some(m) = sys::mounts()
        .into_iter()
        .filter(|m| workdir.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
    {
        p.fact("workdir", format!("{} ({} on {})", workdir.display(), m.fstype, m.source));
    }
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
        let fs = LOOP_KINDS.iter().copied().find(|k| *k == spec.kind).unwrap_or("ext4");
        let common = CommonOptions::parse(spec, text, &["size", "mkfs", "mount", "loop_dio"])?;
        let loop_dio = match spec.get("loop_dio") {
            None | Some("1") => true,
            Some("0") => false,
            Some(v) => return Err(InputError::new(format!("{fs}: loop_dio={v}: expected 1 or 0"))),
        };
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
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::default();
        let built = (|| {
            let mnt = p.make_dir(ctx, &format!("mnt-{}-{}", ctx.index, self.fs), false)?;
            p.root = mnt.clone();
            let image = ctx.workdir.path().join(format!("image-{}-{}.img", ctx.index, self.fs));
            p.add(ctx, Resource::File { path: image.clone() })?;
            create_image(&image, self.common.size)?;
            p.fact("kind", self.fs);
            p.fact("image", format!("{} ({} bytes, sparse)", image.display(), self.common.size));
            workdir_facts(&mut p, ctx.workdir.path());
            make_filesystem(&mut p, self.fs, &self.common.mkfs, &image)?;
            p.add(ctx, Resource::Loop { image: image.clone() })?;
            let image_s = image.to_string_lossy();
            let mut args = vec!["--find", "--show"];
            if self.loop_dio {
                args.push("--direct-io=on");
            }
            args.push(&image_s);
            let dev = sys::run("losetup", &args)?;
            p.fact(
                "loop_device",
                format!("{dev} (direct I/O to the image {})", if self.loop_dio { "on" } else { "off" }),
            );
            mount(&mut p, ctx, self.fs, &dev, &self.common.mount, &mnt)
        })();
        p.finish(built)
    }
}

fn create_image(path: &Path, size: u64) -> Result<(), TargetError> {
    let f = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| TargetError(format!("cannot create {}: {e}", path.display())))?;
    f.set_len(size).map_err(|e| TargetError(format!("cannot size {}: {e}", path.display())))
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
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::default();
        let built = (|| {
            let mnt = p.make_dir(ctx, &format!("mnt-{}-tmpfs", ctx.index), false)?;
            p.root = mnt.clone();
            p.fact("kind", "tmpfs");
            let mut options = format!("size={}", self.common.size);
            if !self.common.mount.is_empty() {
                options = format!("{options},{}", self.common.mount);
            }
            mount(&mut p, ctx, "tmpfs", "fsarena-tmpfs", &options, &mnt)
        })();
        p.finish(built)
    }
}

/// `fuse2fs[:fs=ext4,size=,mkfs=,mount=]` and `fuse:cmd='... {mnt}'`.
#[derive(Debug, Clone)]
pub struct FuseTarget {
    common: CommonOptions,
    /// For fuse2fs: the filesystem inside the image.
    image_fs: Option<&'static str>,
    /// For fuse: the command, with {mnt} and {work}.
    cmd: Option<String>,
    timeout: Duration,
}

impl FuseTarget {
    /// From `fuse2fs[...]` or `fuse:cmd=...[,timeout=]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        if spec.kind == "fuse2fs" {
            let common = CommonOptions::parse(spec, text, &["fs", "size", "mkfs", "mount"])?;
            let image_fs = match spec.get("fs").unwrap_or("ext4") {
                "ext2" => "ext2",
                "ext3" => "ext3",
                "ext4" => "ext4",
                other => return Err(InputError::new(format!("fuse2fs: fs={other}: expected ext2, ext3 or ext4"))),
            };
            return Ok(Self { common, image_fs: Some(image_fs), cmd: None, timeout: Duration::from_secs(30) });
        }
        let common = CommonOptions::parse(spec, text, &["cmd", "timeout"])?;
        let cmd = spec
            .get("cmd")
            .ok_or_else(|| InputError::new("fuse needs cmd='...{mnt}...', e.g. fuse:cmd='fuse2fs -f img {mnt}'"))?;
        if !cmd.contains("{mnt}") {
            return Err(InputError::new(format!(
                "fuse: cmd='{cmd}' has no {{mnt}}: fsarena needs to know where it mounts"
            )));
        }
        let timeout = match spec.get("timeout") {
            Some(t) => fsarena_core::units::parse_time(t, 1_000_000_000).map_err(|e| e.at("fuse timeout"))?,
            None => fsarena_core::Nanos(30_000_000_000),
        };
        Ok(Self { common, image_fs: None, cmd: Some(cmd.to_string()), timeout: Duration::from_nanos(timeout.0) })
    }

    fn spawn(
        &self,
        p: &mut Provisioned,
        ctx: &ProvisionCtx<'_>,
        mnt: &Path,
        program: &str,
        args: &[String],
    ) -> Result<(), TargetError> {
        let log = ctx.workdir.path().join(format!("fuse-{}.log", ctx.index));
        p.add(ctx, Resource::File { path: log.clone() })?;
        let log_file =
            std::fs::File::create(&log).map_err(|e| TargetError(format!("cannot create {}: {e}", log.display())))?;
        let log_err = log_file.try_clone().map_err(|e| TargetError(e.to_string()))?;
        p.log = Some(log);
        p.add(ctx, Resource::Mount { path: mnt.to_path_buf(), fuse: true })?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err)
            .process_group(0)
            .spawn()
            .map_err(|e| TargetError(format!("cannot start {program}: {e}")))?;
        let pid = child.id();
        let start_time = sys::process_start_time(pid).unwrap_or(0);
        p.add(ctx, Resource::Process { pid, start_time })?;
        p.fact("fuse_pid", pid.to_string());
        let deadline = Instant::now() + self.timeout;
        loop {
            if sys::mount_at(mnt).is_some_and(|m| m.fstype.starts_with("fuse")) {
                // The child is reaped by teardown's kill; do not leave it a zombie meanwhile.
                std::thread::spawn(move || child.wait());
                return Ok(());
            }
            if let Ok(Some(status)) = child.try_wait() {
                if !status.success() {
                    return Err(TargetError(format!(
                        "{program} exited with {status} before mounting {}",
                        mnt.display()
                    )));
                }
            }
            if Instant::now() > deadline {
                return Err(TargetError(format!(
                    "{} is not a mount point after {}s (timeout=); the FUSE command did not mount it",
                    mnt.display(),
                    self.timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Target for FuseTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        if self.image_fs.is_some() {
            "fuse2fs"
        } else {
            "fuse"
        }
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        let mut r = vec![Requirement::Root, Requirement::KernelFs("fuse"), Requirement::DevFuse, req::FUSERMOUNT];
        if let Some(fs) = self.image_fs {
            r.extend([req::FUSE2FS, req::mkfs_tool(fs)]);
        }
        r
    }
    fn image_bytes(&self) -> u64 {
        if self.image_fs.is_some() {
            self.common.size
        } else {
            0
        }
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::default();
        let built = (|| {
            let mnt = p.make_dir(ctx, &format!("mnt-{}-{}", ctx.index, self.kind()), false)?;
            p.root = mnt.clone();
            p.fact("kind", self.kind());
            workdir_facts(&mut p, ctx.workdir.path());
            if let Some(fs) = self.image_fs {
                let image = ctx.workdir.path().join(format!("image-{}-fuse2fs.img", ctx.index));
                p.add(ctx, Resource::File { path: image.clone() })?;
                create_image(&image, self.common.size)?;
                p.fact("image", format!("{} ({} bytes, sparse)", image.display(), self.common.size));
                make_filesystem(&mut p, fs, &self.common.mkfs, &image)?;
                let mut args =
                    vec!["-f".to_string(), image.to_string_lossy().into_owned(), mnt.to_string_lossy().into_owned()];
                if !self.common.mount.is_empty() {
                    args.extend(["-o".to_string(), self.common.mount.clone()]);
                }
                p.fact("fuse_command", format!("fuse2fs {}", args.join(" ")));
                p.fact("fuse2fs_version", sys::tool_version("fuse2fs", "-V"));
                self.spawn(&mut p, ctx, &mnt, "fuse2fs", &args)
            } else {
                let work = p.make_dir(ctx, &format!("work-{}-fuse", ctx.index), true)?;
                let cmd = self.cmd.clone().unwrap_or_default();
                let cmd = cmd.replace("{mnt}", &mnt.to_string_lossy()).replace("{work}", &work.to_string_lossy());
                p.fact("fuse_command", cmd.clone());
                self.spawn(&mut p, ctx, &mnt, "sh", &["-c".to_string(), cmd])
            }
        })();
        p.finish(built)
    }
}

/// `dir:path=PATH`: an existing directory, never formatted or unmounted; workloads work in a
/// fresh subdirectory that teardown removes.
#[derive(Debug, Clone)]
pub struct DirTarget {
    common: CommonOptions,
    path: PathBuf,
}

impl DirTarget {
    /// From `dir:path=...[,label=...]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        let common = CommonOptions::parse(spec, text, &["path"])?;
        let path = spec.get("path").ok_or_else(|| InputError::new("target dir needs path=, e.g. dir:path=/mnt/nfs"))?;
        let path = PathBuf::from(path);
        if !path.is_dir() {
            return Err(InputError::new(format!("dir:path={}: not an existing directory", path.display())));
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
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::default();
        let built = (|| {
            let work = self.path.join(format!("fsarena-{}-{}", std::process::id(), ctx.index));
            // Not recursive: only an empty directory is removed, so files kept with keep=1 stay.
            p.add(ctx, Resource::Dir { path: work.clone(), recursive: false })?;
            std::fs::create_dir(&work).map_err(|e| TargetError(format!("cannot create {}: {e}", work.display())))?;
            p.fact("kind", "dir");
            p.fact("path", self.path.display().to_string());
            p.root = work;
            Ok(())
        })();
        let mounted = p.finish(built)?;
        Ok(mounted)
    }
}

/// `device:path=/dev/X,fs=KIND`: a real block device, formatted only with --force and never
/// when mounted anywhere.
#[derive(Debug, Clone)]
pub struct DeviceTarget {
    common: CommonOptions,
    device: PathBuf,
    fs: &'static str,
}

impl DeviceTarget {
    /// From `device:path=/dev/X,fs=KIND[,mkfs=,mount=]`; `force` is `--force`.
    pub fn from_spec(spec: &Spec, text: &str, force: bool) -> Result<Self, InputError> {
        let common = CommonOptions::parse(spec, text, &["path", "fs", "mkfs", "mount"])?;
        let device = PathBuf::from(spec.get("path").ok_or_else(|| InputError::new("device needs path=/dev/X"))?);
        let fs_name = spec
            .get("fs")
            .ok_or_else(|| InputError::new(format!("device needs fs=KIND: one of {}", LOOP_KINDS.join(", "))))?;
        let fs = LOOP_KINDS.iter().copied().find(|k| *k == fs_name).ok_or_else(|| {
            InputError::new(format!("device: fs={fs_name}: expected one of {}", LOOP_KINDS.join(", ")))
        })?;
        if !force {
            return Err(InputError::new(format!(
                "device:path={} would be formatted, destroying its data: add --force to confirm",
                device.display()
            )));
        }
        use std::os::unix::fs::FileTypeExt;
        let meta = std::fs::metadata(&device)
            .map_err(|e| InputError::new(format!("device:path={}: {e}", device.display())))?;
        if !meta.file_type().is_block_device() {
            return Err(InputError::new(format!("device:path={}: not a block device", device.display())));
        }
        if let Some(m) = mounted_device(&device) {
            return Err(InputError::new(format!(
                "device:path={}: it is mounted at {}; refusing to format it",
                device.display(),
                m.display()
            )));
        }
        Ok(Self { common, device, fs })
    }
}

/// Where `device` (or one of its partitions) is mounted, if anywhere.
fn mounted_device(device: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(device).ok()?.rdev();
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let name = std::fs::canonicalize(device).ok()?.file_name()?.to_string_lossy().to_string();
    let mut devs = vec![format!("{major}:{minor}")];
    for e in std::fs::read_dir(format!("/sys/class/block/{name}")).into_iter().flatten().flatten() {
        if let Ok(d) = std::fs::read_to_string(e.path().join("dev")) {
            devs.push(d.trim().to_string());
        }
    }
    sys::mounts().into_iter().find(|m| devs.contains(&m.dev)).map(|m| m.mount_point)
}

impl Target for DeviceTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        "device"
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        vec![Requirement::Root, Requirement::KernelFs(req::kernel_name(self.fs)), req::mkfs_tool(self.fs)]
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::default();
        let built = (|| {
            if let Some(m) = mounted_device(&self.device) {
                return Err(TargetError(format!(
                    "{} is mounted at {}; refusing to format it",
                    self.device.display(),
                    m.display()
                )));
            }
            let mnt = p.make_dir(ctx, &format!("mnt-{}-device", ctx.index), false)?;
            p.root = mnt.clone();
            p.fact("kind", format!("device ({})", self.fs));
            p.fact("device", self.device.display().to_string());
            make_filesystem(&mut p, self.fs, &self.common.mkfs, &self.device)?;
            mount(&mut p, ctx, self.fs, &self.device.to_string_lossy(), &self.common.mount, &mnt)
        })();
        p.finish(built)
    }
}
