//! Targets against the real kernel: mkfs, loop devices, mounts, fuse2fs; teardown, cleanup
//! after SIGKILL, SIGINT, failing mkfs, block devices. Run as root.

use crate::util::Bounded;
use crate::util::{json, run, stderr, stdout, wait_for_mount_under, TestWorkdir};
use std::process::{Command, Stdio};

fn run_on(wd: &TestWorkdir, target: &str, workload: &str) -> std::process::Output {
    run(&["run", "--workdir", &wd.arg(), "--target", target, "--workload", workload, "--output-format", "json"])
}

/// Provisions `target`, writes with verify and reads back through it, checks what was captured,
/// and checks that teardown left nothing.
fn provision_and_use(target: &str, fstype: &str) {
    let wd = TestWorkdir::new(&format!("kind-{}", target.split(':').next().unwrap()));
    let out = run_on(&wd, target, "io:rw=randwrite,bs=64k,size=16m,verify=crc32c");
    assert!(out.status.success(), "{target}: {}", stderr(&out));
    let v = json(&out);
    let r = &v["run"]["results"][0];
    assert_eq!(r["complete"], true);
    assert_eq!(r["jobs"][0]["write"]["io_bytes"], 16 << 20);
    let env = &r["target"]["environment"];
    assert_eq!(env["filesystem"], fstype, "{target}: {env}");
    assert!(env["mount_options"].as_str().unwrap().starts_with("rw"), "{target}: {env}");
    assert!(wd.leftovers().is_empty(), "{target} left {:?}", wd.leftovers());
    let out = run_on(&wd, target, "io:rw=read,bs=1m,size=32m");
    assert!(out.status.success(), "{target}: {}", stderr(&out));
    assert_eq!(json(&out)["run"]["results"][0]["jobs"][0]["read"]["io_bytes"], 32 << 20);
    assert!(wd.leftovers().is_empty(), "{target} left {:?}", wd.leftovers());
}

#[test]
fn ext2_ext3_ext4() {
    provision_and_use("ext2:size=256m", "ext2");
    provision_and_use("ext3:size=256m", "ext3");
    provision_and_use("ext4:size=256m,mount='noatime'", "ext4");
}

#[test]
fn xfs_and_btrfs() {
    provision_and_use("xfs:size=512m", "xfs");
    provision_and_use("btrfs:size=512m,mkfs='--nodesize 16k'", "btrfs");
}

#[test]
fn tmpfs_fuse2fs_and_fuse_command() {
    provision_and_use("tmpfs:size=128m", "tmpfs");
    provision_and_use("fuse2fs:size=256m", "fuse.ext4");
    // Any FUSE filesystem started by a command: fuse2fs itself, on an image in {work}.
    provision_and_use(
        "fuse:cmd='mkfs.ext4 -q -F {work}/i.img 256m && exec fuse2fs -f {work}/i.img {mnt}'",
        "fuse.ext4",
    );
}

#[test]
fn loop_devices_use_direct_io_unless_told_not_to() {
    let wd = TestWorkdir::new("loopdio");
    for (spec, want) in [("ext4:size=128m", "on"), ("ext4:size=128m,loop_dio=0", "off")] {
        let out = run_on(&wd, spec, "io:rw=write,bs=1m,size=4m");
        assert!(out.status.success(), "{}", stderr(&out));
        let env = &json(&out)["run"]["results"][0]["target"]["environment"];
        assert!(env["loop_device"].as_str().unwrap().contains(&format!("direct I/O to the image {want}")), "{env}");
        assert!(env["mkfs"].as_str().unwrap().starts_with("mkfs.ext4 -F -q"), "{env}");
        assert!(env["mkfs_version"].as_str().unwrap().contains("mke2fs"), "{env}");
    }
}

#[test]
fn side_by_side_table_with_environment_header() {
    let wd = TestWorkdir::new("side");
    let out = run(&[
        "run",
        "--workdir",
        &wd.arg(),
        "--target",
        "ext4:size=128m",
        "--target",
        "tmpfs:size=64m,label=ram",
        "--workload",
        "io:rw=write,bs=1m,size=8m",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("machine: cpu="), "{text}");
    assert!(text.contains("target ext4:size=128m: kind=ext4;") && text.contains("mkfs=mkfs.ext4"), "{text}");
    let header = text.lines().find(|l| l.starts_with("| metric")).expect("comparison table");
    assert!(header.contains("ext4:size=128m") && header.contains("ram"), "{header}");
    assert!(text.contains("| write_iops"), "{text}");
    assert!(wd.leftovers().is_empty());
}

#[test]
fn kinds_this_kernel_lacks_are_refused_with_the_reason() {
    let wd = TestWorkdir::new("lacks");
    for kind in ["f2fs", "nilfs2"] {
        let have = std::fs::read_to_string("/proc/filesystems").unwrap().lines().any(|l| l.ends_with(kind));
        if have {
            continue; // this kernel has it: the provisioning tests above cover the code path
        }
        let out = run_on(&wd, kind, "io:size=1m");
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(&format!("the kernel lacks {kind}")), "{}", stderr(&out));
    }
    let out = run(&["targets"]);
    let text = stdout(&out);
    assert!(text.lines().any(|l| l.starts_with("ext4") && l.contains("yes")), "{text}");
    assert!(!wd.path.exists(), "nothing is created for a refused target");
}

#[test]
fn skip_unavailable_runs_what_this_machine_can_provision_and_names_the_rest() {
    let wd = TestWorkdir::new("skip-unavailable");
    let lacking: Vec<&str> = ["f2fs", "nilfs2"]
        .into_iter()
        .filter(|kind| !std::fs::read_to_string("/proc/filesystems").unwrap().lines().any(|l| l.ends_with(kind)))
        .collect();
    let mut args = vec!["run", "--workdir", wd.path.to_str().unwrap(), "--no-store", "--output-format", "json"];
    for kind in &lacking {
        args.extend(["--target", kind]);
    }
    args.extend(["--target", "tmpfs:size=64m", "--workload", "io:rw=write,bs=64k,size=1m", "--skip-unavailable"]);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = json(&out)["run"]["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 1, "only tmpfs ran");
    assert_eq!(results[0]["target"]["kind"], "tmpfs");
    for kind in &lacking {
        assert!(stderr(&out).contains(&format!("skipping target {kind}: the kernel lacks {kind}")), "{}", stderr(&out));
    }
    assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
    if let Some(kind) = lacking.first() {
        let out = run(&[
            "run",
            "--workdir",
            wd.path.to_str().unwrap(),
            "--target",
            kind,
            "--workload",
            "io:size=1m",
            "--skip-unavailable",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("no target can be provisioned here (skipped: "), "{}", stderr(&out));
    }
}

#[test]
fn a_failing_mkfs_exits_1_with_its_message_and_leaves_nothing() {
    let wd = TestWorkdir::new("badmkfs");
    let out = run_on(&wd, "ext4:size=64m,mkfs='-b 999'", "io:size=1m");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("mkfs.ext4") && err.contains("invalid block size"), "{err}");
    assert!(wd.leftovers().is_empty(), "left {:?}", wd.leftovers());
}

fn start_long_run(wd: &TestWorkdir, target: &str) -> std::process::Child {
    let child = crate::util::fsarena()
        .args([
            "run",
            "--workdir",
            &wd.arg(),
            "--target",
            target,
            "--workload",
            "io:rw=randwrite,bs=4k,size=16m,time_based=1,runtime=120",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--no-store",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for_mount_under(&wd.path), "the run never mounted its target");
    std::thread::sleep(std::time::Duration::from_millis(500));
    child
}

#[test]
fn cleanup_undoes_what_a_sigkilled_run_left() {
    for target in ["ext4:size=128m", "fuse2fs:size=128m"] {
        let wd = TestWorkdir::new(&format!("sigkill-{}", &target[..4]));
        let mut child = start_long_run(&wd, target);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(!wd.leftovers().is_empty(), "a killed run leaves its mount behind");
        let out = run(&["cleanup", "--workdir", &wd.arg()]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("unmounted"), "{}", stderr(&out));
        assert!(wd.leftovers().is_empty(), "{target}: cleanup left {:?}", wd.leftovers());
        let again = run(&["cleanup", "--workdir", &wd.arg()]);
        assert!(again.status.success() && stderr(&again).contains("nothing to clean up"));
    }
}

#[test]
fn sigint_tears_everything_down_without_cleanup() {
    let wd = TestWorkdir::new("sigint-t");
    let child = start_long_run(&wd, "fuse2fs:size=128m");
    rustix::process::kill_process(rustix::process::Pid::from_child(&child), rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(wd.leftovers().is_empty(), "SIGINT left {:?}", wd.leftovers());
}

#[test]
fn block_devices_need_force_and_must_not_be_mounted() {
    let wd = TestWorkdir::new("device");
    std::fs::create_dir_all(&wd.path).unwrap();
    let image = wd.path.join("../fsarena-test-device.img");
    std::fs::File::create(&image).unwrap().set_len(128 << 20).unwrap();
    let dev = String::from_utf8(
        Command::new("losetup").args(["--find", "--show", image.to_str().unwrap()]).bounded_output().unwrap().stdout,
    )
    .unwrap();
    let dev = dev.trim().to_string();
    let spec = format!("device:path={dev},fs=ext4");
    let out = run(&["run", "--workdir", &wd.arg(), "--target", &spec, "--workload", "io:size=1m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    let out = run(&[
        "run",
        "--force",
        "--workdir",
        &wd.arg(),
        "--target",
        &spec,
        "--workload",
        "io:rw=write,size=4m",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["run"]["results"][0]["target"]["environment"]["filesystem"], "ext4");
    // Mounted elsewhere: refused.
    let elsewhere = wd.path.join("../fsarena-test-device-mnt");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert!(Command::new("mount").args([&dev, elsewhere.to_str().unwrap()]).status().unwrap().success());
    let out = run(&["run", "--force", "--workdir", &wd.arg(), "--target", &spec, "--workload", "io:size=1m"]);
    let _ = Command::new("umount").arg(&elsewhere).status();
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    let _ = std::fs::remove_file(&image);
    let _ = std::fs::remove_dir(&elsewhere);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is mounted at"), "{}", stderr(&out));
}

#[test]
fn a_failing_fuse_filesystem_shows_the_daemons_stderr() {
    let wd = TestWorkdir::new("fuse-ro");
    let cmd = "fuse:cmd='echo daemon-says-hello >&2; mkfs.ext4 -q -F {work}/i.img 64m && exec fuse2fs -f -o ro {work}/i.img {mnt}'";
    let out = run_on(&wd, cmd, "io:rw=write,size=4m");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("Read-only file system") && err.contains("FUSE daemon said: daemon-says-hello"), "{err}");
    assert!(wd.leftovers().is_empty(), "left {:?}", wd.leftovers());
}

#[test]
fn busy_mounts_are_reported_with_their_holders() {
    let dir = std::env::temp_dir().join(format!("fsarena-holders-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _open = std::fs::File::create(dir.join("held")).unwrap();
    let holders = fsarena_target::sys::holders(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(holders.iter().any(|h| h.starts_with(&format!("pid {} (", std::process::id()))), "{holders:?}");
}

/// Issue 8 (A, B, D): what fsarena creates is confined, recorded with its identity, and
/// undone even after SIGKILL; what it did not create survives.
mod safety {
    use crate::util::Bounded;
    use crate::util::{fsarena, run, stderr, Scratch, TestWorkdir};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn too_small_images_are_refused_before_anything_is_created() {
        let wd = TestWorkdir::new("minsize");
        for (spec, needs) in [
            ("xfs:size=299m", "needs at least 300MiB"),
            ("btrfs:size=100m", "needs at least 109MiB"),
            ("nilfs2:size=128m", "needs at least 129MiB"),
            ("ext4:size=64k", "needs at least 128KiB"),
            ("fuse2fs:size=100k", "needs at least 128KiB"),
        ] {
            let out = run(&["run", "--workdir", &wd.arg(), "--target", spec, "--workload", "io:size=1m"]);
            assert_eq!(out.status.code(), Some(2), "{spec}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains(needs) && err.lines().count() == 1, "{spec}: {err}");
            assert!(!wd.path.exists(), "{spec}: something was created");
        }
    }

    #[test]
    fn a_dir_target_killed_mid_run_is_cleaned_up_with_its_files() {
        let user = Scratch::under("/var/tmp", "sigkill-dir");
        std::fs::write(user.path.join("users-own"), b"keep").unwrap();
        let wd = TestWorkdir::new("sigkill-dir-wd");
        let mut child = fsarena()
            .args(["run", "--workdir", &wd.arg(), "--target", &user.spec(), "--no-store", "--repeat", "1"])
            .args(["--warmup", "0", "--workload", "io:rw=randwrite,bs=4k,size=8m,time_based=1,runtime=120"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for("the job's files", || user.leftovers().iter().any(|p| p.is_file() && !p.ends_with("users-own")));
        child.kill().unwrap();
        child.wait().unwrap();
        let out = run(&["cleanup", "--workdir", &wd.arg()]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("removed"), "{}", stderr(&out));
        assert_eq!(user.leftovers(), vec![user.path.join("users-own")]);
        assert_eq!(std::fs::read(user.path.join("users-own")).unwrap(), b"keep");
        assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
    }

    #[test]
    fn a_busy_mount_keeps_everything_for_cleanup_and_names_its_holder() {
        let wd = TestWorkdir::new("busy");
        let child = fsarena()
            .args(["run", "--workdir", &wd.arg(), "--target", "ext4:size=64m", "--no-store", "--repeat", "1"])
            .args(["--warmup", "0", "--workload", "io:rw=write,bs=64k,size=4m,time_based=1,runtime=2"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(crate::util::wait_for_mount_under(&wd.path));
        let mnt = std::fs::read_dir(&wd.path).unwrap().flatten().map(|e| e.path()).find(|p| p.is_dir()).unwrap();
        let mut holder =
            std::process::Command::new("sleep").arg("60").current_dir(&mnt).spawn().expect("a process in the mount");
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        let left = wd.leftovers();
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("held by pid {} (sleep)", holder.id())), "{err}");
        assert!(err.contains("fsarena cleanup"), "{err}");
        for kind in ["mount ", "loop ", ".img", "state-"] {
            assert!(left.iter().any(|l| l.contains(kind)), "{kind} was not kept: {left:?}");
        }
        let out = run(&["cleanup", "--workdir", &wd.arg()]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
    }

    #[test]
    fn a_fuse_command_that_never_mounts_is_ended_with_its_children() {
        let wd = TestWorkdir::new("fuse-timeout");
        let marker = format!("fsarena-h1-never-{}", std::process::id());
        let spec = format!("fuse:cmd='sleep 300 # {marker} {{mnt}}',timeout=1s");
        let started = Instant::now();
        let out = run(&["run", "--workdir", &wd.arg(), "--target", &spec, "--workload", "io:size=1m"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("did not mount") && stderr(&out).contains("ended"), "{}", stderr(&out));
        assert!(started.elapsed() < Duration::from_secs(20));
        // `sh -c` forks `sleep`: the whole process group goes.
        let alive = std::process::Command::new("pgrep").args(["-f", &marker]).bounded_output().unwrap();
        assert!(alive.stdout.is_empty(), "left running: {}", String::from_utf8_lossy(&alive.stdout));
        assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
    }

    #[test]
    fn a_hostile_work_directory_name_reaches_the_fuse_command_as_one_word() {
        let base = Scratch::under("/var/tmp", "quoted");
        let workdir = base.path.join("a b;touch PWNED;#'$(touch PWNED2)");
        let out = crate::util::fsarena()
            .current_dir(&base.path)
            .args(["run", "--no-store", "--repeat", "1", "--warmup", "0", "--workdir", workdir.to_str().unwrap()])
            .args(["--target", "fuse:cmd='mkfs.ext4 -q -F {work}/i.img 64m && exec fuse2fs -f {work}/i.img {mnt}'"])
            .args(["--workload", "io:rw=write,bs=1m,size=4m"])
            .bounded_output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!base.path.join("PWNED").exists() && !base.path.join("PWNED2").exists());
        assert_eq!(std::fs::read_dir(&workdir).unwrap().count(), 0, "the run left something");
    }

    #[test]
    fn a_relative_work_directory_is_absolute_for_cleanup_from_elsewhere() {
        let a = Scratch::under("/var/tmp", "rel-a");
        let b = Scratch::under("/var/tmp", "rel-b");
        let mut child = fsarena()
            .current_dir(&a.path)
            .args(["run", "--workdir", "work", "--target", "tmpfs:size=32m", "--no-store", "--repeat", "1"])
            .args(["--warmup", "0", "--workload", "io:rw=randwrite,bs=4k,size=4m,time_based=1,runtime=120"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(crate::util::wait_for_mount_under(&a.path.join("work")));
        child.kill().unwrap();
        child.wait().unwrap();
        // A same-named directory elsewhere is not the run's: nothing to do there.
        std::fs::create_dir(b.path.join("work")).unwrap();
        let elsewhere = fsarena().current_dir(&b.path).args(["cleanup", "--workdir", "work"]).bounded_output().unwrap();
        assert!(stderr(&elsewhere).contains("nothing to clean up"), "{}", stderr(&elsewhere));
        let state: Vec<_> = std::fs::read_dir(a.path.join("work")).unwrap().flatten().map(|e| e.path()).collect();
        let text = std::fs::read_to_string(state.iter().find(|p| p.to_string_lossy().contains("state-")).unwrap());
        assert!(text.unwrap().contains(&format!("\"workdir\":\"{}/work\"", a.path.display())));
        let here = fsarena().current_dir(&a.path).args(["cleanup", "--workdir", "work"]).bounded_output().unwrap();
        assert!(here.status.success() && stderr(&here).contains("unmounted"), "{}", stderr(&here));
        assert_eq!(std::fs::read_dir(a.path.join("work")).unwrap().count(), 0);
    }

    /// A loop device of our own, detached on drop.
    struct LoopDevice {
        dev: String,
        image: std::path::PathBuf,
    }

    impl LoopDevice {
        fn new(name: &str, size: u64) -> Self {
            let image = std::path::PathBuf::from(format!("/var/tmp/fsarena-test-{name}-{}.img", std::process::id()));
            std::fs::File::create(&image).unwrap().set_len(size).unwrap();
            let out =
                std::process::Command::new("losetup").args(["--find", "--show"]).arg(&image).bounded_output().unwrap();
            Self { dev: String::from_utf8(out.stdout).unwrap().trim().to_string(), image }
        }
    }

    impl Drop for LoopDevice {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
            let _ = std::fs::remove_file(&self.image);
        }
    }

    #[test]
    fn devices_in_use_as_swap_or_a_mounted_btrfs_are_refused() {
        let wd = TestWorkdir::new("device-use");
        let refused = |dev: &str, why: &str| {
            let spec = format!("device:path={dev},fs=ext4");
            let out = run(&["run", "--force", "--workdir", &wd.arg(), "--target", &spec, "--workload", "io:size=1m"]);
            assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
            assert!(stderr(&out).contains(why), "{}", stderr(&out));
        };
        let swap = LoopDevice::new("swapdev", 64 << 20);
        assert!(std::process::Command::new("mkswap").arg(&swap.dev).bounded_output().unwrap().status.success());
        assert!(std::process::Command::new("swapon").arg(&swap.dev).status().unwrap().success());
        refused(&swap.dev, "in use as swap");
        let _ = std::process::Command::new("swapoff").arg(&swap.dev).status();
        // btrfs shows an anonymous device number in the mount table: found by its source.
        let btrfs = LoopDevice::new("btrfsdev", 128 << 20);
        let mnt = Scratch::under("/var/tmp", "btrfs-mnt");
        assert!(std::process::Command::new("mkfs.btrfs").args(["-q", "-f", &btrfs.dev]).status().unwrap().success());
        assert!(std::process::Command::new("mount").arg(&btrfs.dev).arg(&mnt.path).status().unwrap().success());
        std::fs::write(mnt.path.join("precious"), b"data").unwrap();
        let spec = format!("device:path={},fs=ext4", btrfs.dev);
        let out = run(&["run", "--force", "--workdir", &wd.arg(), "--target", &spec, "--workload", "io:size=1m"]);
        let survived = std::fs::read(mnt.path.join("precious")).ok();
        let _ = std::process::Command::new("umount").arg(&mnt.path).status();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("is mounted at"), "{}", stderr(&out));
        assert_eq!(survived.as_deref(), Some(&b"data"[..]));
        assert!(!wd.path.exists());
    }
}

/// `dir:path=A:B` is two client mounts of one filesystem (here one directory and a symlink
/// to it): io `clients=2` runs a clone on each and counts each client's bytes; two unrelated
/// directories are refused (exit 1, nothing left in either), as they are not one filesystem.
#[test]
fn a_dir_target_with_several_client_paths() {
    let shared = crate::util::Scratch::new("dir-clients");
    let other = crate::util::Scratch::new("dir-clients-other");
    let alias = shared.path.with_extension("alias");
    let _ = std::fs::remove_file(&alias);
    std::os::unix::fs::symlink(&shared.path, &alias).unwrap();
    let both = format!("dir:path={}:{}", shared.path.display(), alias.display());
    let out = run(&[
        "run",
        "--no-store",
        "--output-format",
        "json",
        "--target",
        &both,
        "--workload",
        "io:rw=write,bs=64k,size=1m,clients=2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let counters = &v["run"]["results"][0]["counters"];
    assert_eq!(counters["client1.write_bytes"][0], 1 << 20, "{counters}");
    assert_eq!(counters["client2.write_bytes"][0], 1 << 20, "{counters}");
    assert!(shared.leftovers().is_empty(), "{:?}", shared.leftovers());

    let apart = format!("dir:path={}:{}", shared.path.display(), other.path.display());
    let out = run(&["run", "--no-store", "--target", &apart, "--workload", "io:rw=write,bs=64k,size=1m"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not a mount of the same filesystem"), "{}", stderr(&out));
    assert!(shared.leftovers().is_empty() && other.leftovers().is_empty());
    let _ = std::fs::remove_file(&alias);
}
