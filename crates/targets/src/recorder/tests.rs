//! The recorder on a real ext4 (root): a write and an fsync are logged, a crash image cut at
//! the flush mounts with the fsynced file in it and is clean, and nothing is left behind.

use super::*;

#[test]
fn an_fsynced_file_survives_the_crash_image_cut_at_its_flush() {
    if !sys::is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fsarena-crash-rec-{}", std::process::id()));
    let run = crate::RunId::generate().unwrap();
    let workdir = Workdir::open(&dir, &run).unwrap();
    let options = RecordOptions {
        fs: "ext4".into(),
        size: 64 << 20,
        mkfs: Vec::new(),
        mount: String::new(),
        sector_4k: false,
        max_log: 1 << 30,
        slots: 1,
        fuse2fs: false,
        daemon: None,
        daemon_timeout: Duration::from_secs(30),
    };
    let mut rec = RecordedFs::start(&workdir, 0, options).unwrap();
    let root = rec.begin_case().unwrap();
    std::fs::write(root.join("f"), b"hello").unwrap();
    File::open(root.join("f")).unwrap().sync_all().unwrap();
    rec.mark(1).unwrap();
    // The FUSE connection is the server process's alone: a SIGKILLed fsarena never keeps it
    // open with nobody answering.
    let ours: Vec<_> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .collect();
    assert!(!ours.iter().any(|l| l == Path::new("/dev/fuse")), "{ours:?}");
    let entries = rec.end_case().unwrap();
    let mark = entries.iter().position(|e| *e == Entry::Mark(1)).unwrap();
    assert!(entries[..mark].contains(&Entry::Flush), "{entries:?}");
    assert!(entries.iter().any(|e| matches!(e, Entry::Write { .. })));
    // Every write up to the last flush before the mark.
    let cut = entries[..mark].iter().rposition(|e| *e == Entry::Flush).unwrap();
    let keep: Vec<usize> = (0..cut).collect();
    let image = rec.build_state(0, &entries, &keep, None).unwrap();
    let checked =
        rec.check_state(0, &image, Duration::from_secs(10), |root| std::fs::read(root.join("f")).ok()).unwrap();
    assert_eq!(checked.unwrap().as_deref(), Some(&b"hello"[..]));
    // Unmounted after the check, and clean: recovery left a consistent image.
    let fsck = Command::new("e2fsck").arg("-fn").arg(&image).output().unwrap();
    assert!(fsck.status.success(), "{fsck:?}");
    // Nothing in it: the fresh filesystem has no f.
    let image = rec.build_state(0, &entries, &[], None).unwrap();
    let checked = rec.check_state(0, &image, Duration::from_secs(10), |root| root.join("f").exists()).unwrap();
    assert!(!checked.unwrap());
    rec.finish().unwrap();
    assert!(workdir.close().is_none(), "something is still recorded");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&dir.display().to_string()), "{mounts}");
    let loops = sys::run("losetup", &["-a"]).unwrap();
    assert!(!loops.contains(&dir.display().to_string()), "{loops}");
    let _ = std::fs::remove_dir_all(&dir);
}
