//! Bad target specs (sizes, keys, labels with escapes, kinds, FUSE commands, device paths)
//! and work directories fsarena must not trust (relative paths aside, which are made
//! absolute): symlinks, other owners, writable by others, files. Each must exit 2 with one
//! line, creating nothing — not even a `.lock` — in a directory it refused.

use super::harness::Arena;
use super::table::{mkfifo, refuse_all, row, tg, Row};
use std::os::unix::fs::PermissionsExt;

#[test]
fn bad_target_specs_are_refused_before_provisioning() {
    let f = Arena::new("specs");
    mkfifo(&f.path("fifo"));
    let force =
        |spec: &str, wants: &[&str]| row(&["run", "--force", "--target", spec, "--workload", "io:size=1m"], wants);
    let rows: Vec<Row> = vec![
        // Sizes: too small for the filesystem, zero, negative, overflowing, not sizes.
        tg("xfs:size=100m", &["100m"]),
        tg("xfs:size=16m", &["16m"]),
        tg("xfs:size=299m", &["299m"]),
        tg("btrfs:size=64m", &["64m"]),
        tg("btrfs:size=100m", &["100m"]),
        tg("ext4:size=64k", &["64k"]),
        tg("ext4:size=1k", &["1k"]),
        tg("ext2:size=1", &["size=1"]),
        tg("ext4:size=0", &["size=0"]),
        tg("xfs:size=0", &["size=0"]),
        tg("tmpfs:size=0", &["size=0"]),
        tg("fuse2fs:size=0", &["size=0"]),
        tg("fuse2fs:size=64k", &["64k"]),
        tg("ext4:size=-1", &["-1"]),
        tg("ext4:size=-1g", &["-1g"]),
        tg("tmpfs:size=-5m", &["-5m"]),
        tg("ext4:size=1e", &["1e"]),
        tg("ext4:size=18446744073709551616", &["18446744073709551616"]),
        tg("ext4:size=99999999999999999999999t", &["99999999999999999999999t"]),
        tg("ext4:size=16e", &["16e"]),
        tg("ext4:size=1y", &["1y"]),
        tg("ext4:size=1p", &["1p"]),
        tg("ext4:size=nan", &["nan"]),
        tg("ext4:size=0x10", &["0x10"]),
        tg("ext4:size=' '", &["size"]),
        // Keys a kind does not take; values it does not accept.
        tg("ext4:path=/x", &["path"]),
        tg("tmpfs:mkfs=-x", &["mkfs"]),
        tg("tmpfs:loop_dio=1", &["loop_dio"]),
        tg("dir:path={T},size=1g", &["size"]),
        tg("fuse:cmd='x {mnt}',size=1g", &["size"]),
        tg("ext4:loop_dio=2", &["loop_dio=2"]),
        tg("fuse2fs:fs=xfs", &["fs=xfs"]),
        // Escapes and newlines in keys, labels and kinds reach the terminal inert.
        tg("ext4:\x1b[31m=1", &["\\x1b[31m"]),
        tg("ext4:label=\x1b[2J\nX,colour=red", &["\\x1b[2J\\nX", "colour"]),
        tg("tmpfs:size=0,label=\x1b]0;pwned\x07", &["\\x1b]0;pwned\\x07"]),
        tg("ext4:size=4q,label=\u{202e}gpj.exe", &["\\u{202e}gpj.exe"]),
        tg("\x1b]0;pwned\x07", &["\\x1b]0;pwned\\x07"]),
        // Kinds.
        tg("zfs", &["zfs"]),
        tg("EXT4", &["EXT4"]),
        tg("", &["spec"]),
        tg(":", &["spec"]),
        tg("ext4:,=1", &["=1"]),
        tg("dir", &["path="]),
        tg("dir:path={S}/victim/x", &["{S}/victim/x"]),
        tg("dir:path=/nonexistent/hostile", &["/nonexistent/hostile"]),
        tg("dir:path=", &["path"]),
        // FUSE commands that cannot say where they mount.
        tg("fuse:cmd='true'", &["{mnt}"]),
        tg("fuse:cmd='sleep 1'", &["{mnt}"]),
        tg("fuse:cmd=", &["cmd"]),
        tg("fuse:cmd='{work}'", &["{mnt}"]),
        tg("fuse", &["cmd"]),
        tg("fuse:cmd='{MNT}'", &["{mnt}"]),
        tg("fuse:cmd='x {mnt}',timeout=-1", &["-1"]),
        tg("fuse:cmd='x {mnt}',timeout=forever", &["forever"]),
        // Devices that are not block devices, or not given properly.
        force("device:path=/dev/null,fs=ext4", &["/dev/null"]),
        force("device:path=/dev/zero,fs=ext4", &["/dev/zero"]),
        force("device:path={S}/victim/x,fs=ext4", &["{S}/victim/x"]),
        force("device:path={S}/victim,fs=ext4", &["{S}/victim"]),
        force("device:path={F}/fifo,fs=ext4", &["{F}/fifo"]),
        force("device:path=/nonexistent/dev,fs=ext4", &["/nonexistent/dev"]),
        force("device:path=,fs=ext4", &["path"]),
        force("device:fs=ext4", &["path"]),
        force("device:path=/dev/null", &["fs="]),
        force("device:path=/dev/null,fs=zfs", &["zfs"]),
        tg("device:path={S}/victim/x,fs=ext4", &["--force"]),
    ];
    refuse_all("specs", &f, rows, 4);
}

/// A directory at `f/rel` with `mode` and owner `uid`.
fn odd_dir(f: &Arena, rel: &str, mode: u32, uid: u32) -> std::path::PathBuf {
    let p = f.dir(rel);
    std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

#[test]
fn untrusted_work_directories_are_refused() {
    let f = Arena::new("workdirs");
    const NOBODY: u32 = 65534;
    // What each planted work directory holds: a state file naming a victim beside it, so that
    // a cleanup that trusts the directory damages something the snapshot sees.
    let victim = f.file("victim", "victim of an untrusted work directory\n");
    let state = format!("{{\"resource\":\"file\",\"path\":\"{}\"}}\n", victim.display());
    let plant = |dir: &std::path::Path| std::fs::write(dir.join("state-1.jsonl"), &state).unwrap();
    let real = odd_dir(&f, "wd-real", 0o700, 0);
    plant(&real);
    std::os::unix::fs::symlink(&real, f.path("wd-link")).unwrap();
    for (rel, mode, uid) in [
        ("wd-nobody", 0o700, NOBODY),
        ("wd-0777", 0o777, 0),
        ("wd-0770", 0o770, 0),
        ("wd-0702", 0o702, 0),
        ("wd-1777", 0o1777, 0),
        ("esc\x1b[2J-0777", 0o777, 0),
    ] {
        plant(&odd_dir(&f, rel, mode, uid));
    }
    std::os::unix::fs::symlink(f.path("wd-nobody"), f.path("wd-link-nobody")).unwrap();
    odd_dir(&f, "gw", 0o775, 0);
    plant(&odd_dir(&f, "gw/existing", 0o700, 0));
    odd_dir(&f, "nob", 0o755, NOBODY);
    plant(&odd_dir(&f, "nob/existing", 0o700, 0));
    odd_dir(&f, "real-ancestor", 0o755, 0);
    plant(&odd_dir(&f, "real-ancestor/work", 0o700, 0));
    std::os::unix::fs::symlink(f.path("real-ancestor"), f.path("lnk")).unwrap();
    f.file("afile", "a file, not a directory\n");
    mkfifo(&f.path("afifo"));
    let run = |wd: &str, wants: &[&str]| {
        row(&["run", "--target", "dir:path={T}", "--workload", "io:size=1m", "--workdir", wd], wants)
    };
    let clean = |wd: &str, wants: &[&str]| row(&["cleanup", "--workdir", wd], wants);
    let rows: Vec<Row> = vec![
        run("{F}/wd-link", &["{F}/wd-link"]),
        run("{F}/wd-nobody", &["{F}/wd-nobody"]),
        run("{F}/wd-0777", &["{F}/wd-0777"]),
        run("{F}/wd-0770", &["{F}/wd-0770"]),
        run("{F}/wd-0702", &["{F}/wd-0702"]),
        run("{F}/wd-1777", &["{F}/wd-1777"]),
        run("{F}/esc\x1b[2J-0777", &["esc\\x1b[2J-0777"]),
        run("{F}/wd-link-nobody", &["{F}/wd-link-nobody"]),
        run("{F}/gw/work", &["{F}/gw"]),
        run("{F}/gw/existing", &["{F}/gw"]),
        run("{F}/nob/work", &["{F}/nob"]),
        run("{F}/nob/existing", &["{F}/nob"]),
        run("{F}/lnk/work", &["{F}/lnk"]),
        run("{F}/afile", &["{F}/afile"]),
        run("{F}/afile/sub", &["{F}/afile"]),
        run("{F}/afifo", &["{F}/afifo"]),
        run("/dev/null", &["/dev/null"]),
        run("/proc/self", &["/proc/self"]),
        run("", &["workdir"]),
        row(
            &["run", "--target", "ext4:size=64m", "--workload", "io:size=1m", "--workdir", "{F}/wd-0777"],
            &["{F}/wd-0777"],
        ),
        row(&["demo", "--workdir", "{F}/wd-0777"], &["{F}/wd-0777"]),
        clean("{F}/wd-link", &["{F}/wd-link"]),
        clean("{F}/wd-nobody", &["{F}/wd-nobody"]),
        clean("{F}/wd-0777", &["{F}/wd-0777"]),
        clean("{F}/wd-0702", &["{F}/wd-0702"]),
        clean("{F}/gw/existing", &["{F}/gw"]),
        clean("{F}/nob/existing", &["{F}/nob"]),
        clean("{F}/lnk/work", &["{F}/lnk"]),
        clean("{F}/afile", &["{F}/afile"]),
    ];
    refuse_all("workdirs", &f, rows, 2);
}
