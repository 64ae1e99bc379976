//! Block devices fsarena must refuse even with --force, before mkfs runs: a loop device of
//! the test's own mounted here, a mounted btrfs (which shows an anonymous device number in
//! the mount table), one mounted only in another mount namespace, one in use as swap, and a
//! symlink to a mounted one. Their images must come out byte for byte as they went in.
//! (Holders need device-mapper or md, which this machine's kernel may lack; not played.)

use super::harness::Arena;
use super::table::{refuse_all, row, Row};
use std::process::Command;
use std::time::{Duration, Instant};

fn mkfs(fs: &str, dev: &str) {
    let flag = if fs == "btrfs" { "-f" } else { "-F" };
    let ok = Command::new(format!("mkfs.{fs}")).args(["-q", flag, dev]).status().unwrap().success();
    assert!(ok, "mkfs.{fs} {dev}");
}

fn mount(dev: &str, at: &std::path::Path) {
    // Read-only, so that the kernel writes nothing to the image while the cases compare it.
    assert!(Command::new("mount").args(["-o", "ro", dev]).arg(at).status().unwrap().success(), "mount {dev}");
}

#[test]
fn devices_in_use_anywhere_are_refused_even_with_force() {
    let f = Arena::new("devices");
    let mounted = f.loop_device("mounted.img", 64 << 20);
    mkfs("ext4", &mounted);
    mount(&mounted, &f.dir("mnt-ext4"));
    let btrfs = f.loop_device("btrfs.img", 128 << 20);
    mkfs("btrfs", &btrfs);
    mount(&btrfs, &f.dir("mnt-btrfs"));
    let swap = f.loop_device("swap.img", 32 << 20);
    f.swapon(&swap);
    // Mounted in a mount namespace of its own, invisible in this one's mount table.
    let elsewhere = f.loop_device("elsewhere.img", 64 << 20);
    mkfs("ext4", &elsewhere);
    let ns_mnt = f.dir("mnt-ns");
    let pid = f.spawn(
        Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(format!("mount -o ro {elsewhere} '{}' && exec sleep 600", ns_mnt.display())),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
        .unwrap_or_default()
        .contains(&*ns_mnt.to_string_lossy())
    {
        assert!(Instant::now() < deadline, "the namespace never mounted {elsewhere}");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::os::unix::fs::symlink(&mounted, f.path("devlink")).unwrap();
    let dev = |path: &str, fs: &str, wants: &[&str]| {
        row(&["run", "--force", "--target", &format!("device:path={path},fs={fs}"), "--workload", "io:size=1m"], wants)
    };
    let rows: Vec<Row> = vec![
        dev(&mounted, "ext4", &[&mounted]),
        dev(&mounted, "xfs", &[&mounted]),
        dev(&btrfs, "btrfs", &[&btrfs]),
        dev(&btrfs, "ext4", &[&btrfs]),
        dev(&swap, "ext4", &[&swap, "swap"]),
        dev(&elsewhere, "ext4", &[&elsewhere]),
        dev("{F}/devlink", "ext4", &["devlink"]),
        row(&["run", "--target", &format!("device:path={mounted},fs=ext4"), "--workload", "io:size=1m"], &["--force"]),
    ];
    refuse_all("devices", &f, rows, 1);
}
