//! `device:` targets: a real block device, formatted only with `--force`, and never while it
//! (or one of its partitions) is in use: mounted in any mount namespace, part of a mounted
//! btrfs, active swap, held by another device (device-mapper, RAID, ...) or opened exclusively
//! by the kernel. Checked when the plan is made and again right before mkfs.

use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::kinds::{check_minimum, make_filesystem, mount};
use crate::requirements::Requirement;
use crate::table::{filesystem, filesystem_names, Filesystem};
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::{InputError, Spec};
use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `device:path=/dev/X,fs=KIND`: a real block device, formatted only with --force and never
/// when in use.
#[derive(Debug, Clone)]
pub struct DeviceTarget {
    common: CommonOptions,
    device: PathBuf,
    fs: &'static Filesystem,
}

impl DeviceTarget {
    /// From `device:path=/dev/X,fs=KIND[,mkfs=,mount=]`; `force` is `--force`.
    pub fn from_spec(spec: &Spec, text: &str, force: bool) -> Result<Self, InputError> {
        let common = CommonOptions::parse(spec, text, &["path", "fs", "mkfs", "mount"])?;
        let given = spec.get("path").ok_or_else(|| InputError::new("device needs path=/dev/X"))?;
        let fs_name = spec
            .get("fs")
            .ok_or_else(|| InputError::new(format!("device needs fs=KIND: one of {}", filesystem_names())))?;
        let fs = filesystem(fs_name)
            .ok_or_else(|| InputError::new(format!("device: fs={fs_name}: expected one of {}", filesystem_names())))?;
        if !force {
            return Err(InputError::new(format!(
                "device:path={given} would be formatted, destroying its data: add --force to confirm"
            )));
        }
        let device = std::path::absolute(given)
            .map_err(|e| InputError::new(format!("device:path={given}: {e}: expected a block device")))?;
        let meta = std::fs::metadata(&device).map_err(|e| InputError::new(format!("device:path={given}: {e}")))?;
        if !meta.file_type().is_block_device() {
            return Err(InputError::new(format!("device:path={given}: not a block device")));
        }
        if let Some(why) = in_use(&device) {
            return Err(InputError::new(format!("device:path={given}: {why}; refusing to format it")));
        }
        if let Some(bytes) = sys::block_device_bytes(&device) {
            check_minimum("device", fs, bytes, &format!("path={given} of "))?;
        }
        Ok(Self { common, device, fs })
    }
}

/// A block device and its partitions: kernel names (`sda`, `sda1`) and `major:minor`.
struct Family {
    names: HashSet<String>,
    devs: HashSet<String>,
    rdevs: HashSet<u64>,
}

fn family(device: &Path) -> Option<Family> {
    let rdev = std::fs::metadata(device).ok()?.rdev();
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    // /sys/dev/block/MAJ:MIN names the device whatever path (a /dev/disk/by-id link) was given.
    let sys_dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let name = sys_dir.file_name()?.to_string_lossy().into_owned();
    let mut f = Family {
        names: HashSet::from([name]),
        devs: HashSet::from([format!("{major}:{minor}")]),
        rdevs: HashSet::from([rdev]),
    };
    for e in std::fs::read_dir(&sys_dir).into_iter().flatten().flatten() {
        if !e.path().join("partition").exists() {
            continue;
        }
        if let Ok(d) = std::fs::read_to_string(e.path().join("dev")) {
            let d = d.trim().to_string();
            if let Some((ma, mi)) = d.split_once(':').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))) {
                f.rdevs.insert(rustix::fs::makedev(ma, mi));
            }
            f.devs.insert(d);
            f.names.insert(e.file_name().to_string_lossy().into_owned());
        }
    }
    Some(f)
}

impl Family {
    /// `source` (a mount source or swap path) names one of these devices.
    fn is_source(&self, source: &str) -> bool {
        if !source.starts_with('/') {
            return false;
        }
        let by_name = std::fs::canonicalize(source)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .is_some_and(|n| self.names.contains(&n));
        by_name
            || std::fs::metadata(source)
                .is_ok_and(|m| m.file_type().is_block_device() && self.rdevs.contains(&m.rdev()))
    }
}

/// Why `device` must not be formatted, if it is in use.
pub fn in_use(device: &Path) -> Option<String> {
    let Some(f) = family(device) else {
        return Some("cannot find it in /sys/dev/block".to_string());
    };
    // Mounted in any mount namespace: each distinct namespace's table, once.
    let mut seen = HashSet::new();
    let own_ns = std::fs::read_link("/proc/self/ns/mnt").ok();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let ns = std::fs::read_link(entry.path().join("ns/mnt")).ok();
        if ns.as_ref().is_some_and(|ns| !seen.insert(ns.clone())) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path().join("mountinfo")).unwrap_or_default();
        for m in sys::parse_mountinfo(&text) {
            // btrfs shows an anonymous device number (0:45): the source names the device.
            if f.devs.contains(&m.dev) || f.is_source(&m.source) {
                let place = if ns.is_none() || ns == own_ns {
                    String::new()
                } else {
                    format!(" (in the mount namespace of pid {pid})")
                };
                return Some(format!("it is mounted at {}{place}", m.mount_point.display()));
            }
        }
    }
    // A btrfs spanning several devices lists every member here while mounted.
    for fs in std::fs::read_dir("/sys/fs/btrfs").into_iter().flatten().flatten() {
        for member in std::fs::read_dir(fs.path().join("devices")).into_iter().flatten().flatten() {
            if f.names.contains(&member.file_name().to_string_lossy().into_owned()) {
                return Some(format!("it belongs to the mounted btrfs {}", fs.file_name().to_string_lossy()));
            }
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for line in swaps.lines().skip(1) {
        if let Some(path) = line.split_whitespace().next() {
            if f.is_source(&sys::unescape(path)) {
                return Some("it is in use as swap".to_string());
            }
        }
    }
    for name in &f.names {
        let holders: Vec<String> = std::fs::read_dir(format!("/sys/class/block/{name}/holders"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            return Some(format!("{name} is held by {} (device-mapper, RAID or the like)", holders.join(", ")));
        }
    }
    // Last, the kernel's own answer: an exclusive open fails with EBUSY while anything
    // (a filesystem, swap, md, dm) has claimed the device.
    let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::EXCL | rustix::fs::OFlags::CLOEXEC;
    match rustix::fs::open(device, flags, rustix::fs::Mode::empty()) {
        Err(rustix::io::Errno::BUSY) => Some("the kernel reports it busy (an exclusive open failed)".to_string()),
        _ => None,
    }
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
        vec![Requirement::Root, Requirement::KernelFs(self.fs.name), self.fs.mkfs_requirement()]
    }
    fn capacity_bytes(&self) -> Option<u64> {
        sys::block_device_bytes(&self.device)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            if let Some(why) = in_use(&self.device) {
                return Err(TargetError(format!("{}: {why}; refusing to format it", self.device.display())));
            }
            let mnt = p.make_dir(ctx.mount_path(&format!("mnt-{}-device", ctx.index)), false)?;
            p.root = mnt.clone();
            p.fact("kind", format!("device ({})", self.fs.name));
            p.fact("device", self.device.display().to_string());
            make_filesystem(&mut p, self.fs, &self.common.mkfs, &self.device)?;
            mount(&mut p, self.fs.name, &self.device.to_string_lossy(), &self.common.mount, &mnt)
        })();
        p.finish(built)
    }
}
