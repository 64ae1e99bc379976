//! The block devices under a target and their counters, for fio's `disk_util`: the device
//! holding the target's root (a partition counts as its disk, as in fio), then its slaves —
//! sysfs `slaves/` (device-mapper, md) and, for a loop device, the disk holding its backing
//! file, which sysfs does not list but which is where the I/O finally lands.
//!
//! Reading `/sys/block/<name>/stat` before and after the measured phase gives the same
//! figures as fio's disk-utilization thread, which sums the differences of the same file.

use fsarena_core::DiskUtil;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The raw counters of one `stat` line, as the kernel documents them
/// (Documentation/block/stat.rst): fields 1-8, then `io_ticks` and `time_in_queue`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Counters {
    read_ios: u64,
    read_merges: u64,
    read_ticks: u64,
    write_ios: u64,
    write_merges: u64,
    write_ticks: u64,
    io_ticks: u64,
    time_in_queue: u64,
}

/// Parses one `/sys/block/<name>/stat` line; `None` when it has fewer than 11 numbers.
fn parse_stat(line: &str) -> Option<Counters> {
    let f: Vec<u64> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().ok()?;
    (f.len() >= 11).then(|| Counters {
        read_ios: f[0],
        read_merges: f[1],
        read_ticks: f[3],
        write_ios: f[4],
        write_merges: f[5],
        write_ticks: f[7],
        io_ticks: f[9],
        time_in_queue: f[10],
    })
}

/// The counters of `name` now, or `None` when it has no readable stat file.
fn read_counters(name: &str) -> Option<Counters> {
    parse_stat(&std::fs::read_to_string(Path::new("/sys/block").join(name).join("stat")).ok()?)
}

/// The disk (not partition) behind device number `dev`, by its sysfs name; `None` for
/// devices that are not block devices (tmpfs, FUSE, NFS have anonymous device numbers).
fn disk_of_dev(dev: u64) -> Option<String> {
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    // A partition's sysfs directory sits inside its disk's and has a `partition` file; fio
    // reports the disk, whose queue the partition shares.
    let dir = if dir.join("partition").exists() { dir.parent()?.to_path_buf() } else { dir };
    let name = dir.file_name()?.to_str()?.to_string();
    Path::new("/sys/block").join(&name).join("stat").exists().then_some(name)
}

/// The devices under `name`: sysfs slaves, and a loop device's backing file's disk.
fn slaves_of(name: &str) -> Vec<String> {
    let sys = PathBuf::from("/sys/block").join(name);
    let mut slaves: Vec<String> = std::fs::read_dir(sys.join("slaves"))
        .map(|entries| entries.filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string())).collect())
        .unwrap_or_default();
    slaves.sort();
    if let Ok(backing) = std::fs::read_to_string(sys.join("loop/backing_file")) {
        let backing_disk = std::fs::metadata(backing.trim_end_matches('\n')).ok().and_then(|m| disk_of_dev(m.dev()));
        if let Some(disk) = backing_disk {
            if disk != name && !slaves.contains(&disk) {
                slaves.push(disk);
            }
        }
    }
    slaves
}

/// The devices `disk_util` reports for a target rooted at `root`, in fio's order (each
/// device, then its slaves), with each device's slaves; empty when no block device is under
/// it.
pub fn devices_under(root: &Path) -> Vec<(String, Vec<String>)> {
    let Some(disk) = std::fs::metadata(root).ok().and_then(|m| disk_of_dev(m.dev())) else {
        return Vec::new();
    };
    let slaves = slaves_of(&disk);
    let mut devices = vec![(disk, slaves.clone())];
    for slave in slaves {
        if !devices.iter().any(|(d, _)| *d == slave) {
            let below = slaves_of(&slave);
            devices.push((slave, below));
        }
    }
    devices
}

/// Counters of the devices under a target taken at the start of a measured phase;
/// [`DiskSampler::finish`] turns them into what happened since.
#[derive(Debug)]
pub struct DiskSampler {
    /// Each device, its slaves, and its counters at the start.
    devices: Vec<(String, Vec<String>, Counters)>,
    /// When the counters were read.
    started: Instant,
}

impl DiskSampler {
    /// Reads the counters of the devices under `root` (none for tmpfs, FUSE and such).
    pub fn start(root: &Path) -> Self {
        let devices = devices_under(root)
            .into_iter()
            .filter_map(|(name, slaves)| read_counters(&name).map(|c| (name, slaves, c)))
            .collect();
        Self { devices, started: Instant::now() }
    }

    /// What each device did since [`DiskSampler::start`]. The kernel's counters are
    /// `unsigned long` and only grow; a wrapped or reset one (device re-created) reads as 0.
    pub fn finish(&self) -> Vec<DiskUtil> {
        let msec = self.started.elapsed().as_millis() as u64;
        self.devices
            .iter()
            .filter_map(|(name, slaves, before)| {
                let after = read_counters(name)?;
                let d = |a: u64, b: u64| a.saturating_sub(b);
                Some(DiskUtil {
                    name: name.clone(),
                    read_ios: d(after.read_ios, before.read_ios),
                    write_ios: d(after.write_ios, before.write_ios),
                    read_merges: d(after.read_merges, before.read_merges),
                    write_merges: d(after.write_merges, before.write_merges),
                    read_ticks: d(after.read_ticks, before.read_ticks),
                    write_ticks: d(after.write_ticks, before.write_ticks),
                    io_ticks: d(after.io_ticks, before.io_ticks),
                    in_queue: d(after.time_in_queue, before.time_in_queue),
                    msec,
                    slaves: slaves.clone(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernels_stat_line() {
        let line = " 1723618    12509 70882597  1204432   866726  1161866 30861416  1610690        0   168372  2841198       60        0  6160444        4    38277    26071\n";
        let c = parse_stat(line).unwrap();
        assert_eq!((c.read_ios, c.read_merges, c.read_ticks), (1_723_618, 12_509, 1_204_432));
        assert_eq!((c.write_ios, c.write_merges, c.write_ticks), (866_726, 1_161_866, 1_610_690));
        assert_eq!((c.io_ticks, c.time_in_queue), (168_372, 2_841_198));
        // Kernels before 4.18 print 11 fields; fewer is not a stat line.
        assert!(parse_stat("1 2 3 4 5 6 7 8 9 10 11").is_some());
        assert!(parse_stat("1 2 3").is_none());
        assert!(parse_stat("").is_none());
    }

    #[test]
    fn tmpfs_has_no_disk() {
        // /dev/shm is a tmpfs everywhere this runs; its device number is anonymous.
        if crate::sys::mount_at(Path::new("/dev/shm")).is_some_and(|m| m.fstype == "tmpfs") {
            assert!(devices_under(Path::new("/dev/shm")).is_empty());
            assert!(DiskSampler::start(Path::new("/dev/shm")).finish().is_empty());
        }
    }

    #[test]
    fn a_disk_backed_directory_reports_its_disk() {
        // The build directory lives on a disk in CI and here; skip where it does not.
        let here = std::env::current_dir().unwrap();
        let devices = devices_under(&here);
        let Some((name, _)) = devices.first() else { return };
        assert!(Path::new("/sys/block").join(name).join("stat").exists());
        let sampler = DiskSampler::start(&here);
        let stats = sampler.finish();
        assert_eq!(stats.first().map(|s| s.name.as_str()), Some(name.as_str()));
        assert!(stats[0].util() <= 100.0);
    }
}
