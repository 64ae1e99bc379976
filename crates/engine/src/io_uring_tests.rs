//! The io_uring engine against a real file: every SQE flavour (plain, vectored, fixed
//! buffers, registered files, SQPOLL) moves the bytes asked for, honours the depth and
//! returns each slot once.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::EngineFlags;
use std::io::Write;
use std::os::fd::AsFd;

struct TempFile {
    dir: std::path::PathBuf,
    file: std::fs::File,
}

impl TempFile {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("fsarena-uring-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::File::create(&path).unwrap().write_all(&[5u8; 64 << 10]).unwrap();
        let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        Self { dir, file }
    }
    fn bytes(&self) -> Vec<u8> {
        std::fs::read(self.dir.join("f")).unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(flags: EngineFlags) -> EngineConfig {
    EngineConfig { depth: 8, slot_len: 4096, align: 4096, iodepth: 8, flags }
}

fn exercise(tag: &str, flags: EngineFlags) {
    let t = TempFile::new(tag);
    let c = config(flags);
    IoUring::probe(&c).unwrap();
    let mut e = IoUring::new(&c).unwrap();
    e.open_file(t.file.as_fd()).unwrap();
    for slot in 0..8u32 {
        let op = IoOp { dir: IoDir::Read, fd: t.file.as_fd(), offset: u64::from(slot) * 4096, len: 4096, slot };
        assert!(matches!(e.submit(op), Submit::Queued), "{tag}");
    }
    let extra = IoOp { dir: IoDir::Read, fd: t.file.as_fd(), offset: 0, len: 4096, slot: 0 };
    assert!(matches!(e.submit(extra), Submit::Busy), "{tag}: a ninth I/O at depth 8 is refused");
    e.commit().unwrap();
    let mut out = Vec::new();
    let mut got = 0;
    while got < 8 {
        got += e.reap(1, 8, &mut out).unwrap();
    }
    let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
    slots.sort_unstable();
    assert_eq!(slots, (0..8).collect::<Vec<_>>(), "{tag}");
    assert!(out.iter().all(|c| matches!(c.result, Ok(4096))), "{tag}: {out:?}");
    assert!(e.buffers().slot(2).iter().all(|&b| b == 5), "{tag}");
    // A short write (2 KiB of a 4 KiB slot), then a queued fsync.
    e.buffers().slot_mut(1).fill(9);
    let op = IoOp { dir: IoDir::Write, fd: t.file.as_fd(), offset: 8192, len: 2048, slot: 1 };
    assert!(matches!(e.submit(op), Submit::Queued));
    out.clear();
    assert_eq!(e.reap(1, 1, &mut out).unwrap(), 1, "{tag}: reap sends what commit has not");
    assert!(matches!(out[0].result, Ok(2048)), "{tag}");
    let sync = IoOp { dir: IoDir::Fdatasync, fd: t.file.as_fd(), offset: 0, len: 0, slot: 0 };
    assert!(matches!(e.submit(sync), Submit::Queued));
    e.commit().unwrap();
    out.clear();
    assert_eq!(e.reap(1, 1, &mut out).unwrap(), 1);
    assert!(matches!(out[0].result, Ok(0)), "{tag}");
    let data = t.bytes();
    assert!(data[8192..10240].iter().all(|&b| b == 9) && data[10240] == 5, "{tag}");
    // Polling reaps (min 0) return without waiting, and eventually see the completion.
    let op = IoOp { dir: IoDir::Read, fd: t.file.as_fd(), offset: 0, len: 4096, slot: 3 };
    assert!(matches!(e.submit(op), Submit::Queued));
    e.commit().unwrap();
    out.clear();
    let mut tries = 0;
    while e.reap(0, 1, &mut out).unwrap() == 0 {
        tries += 1;
        assert!(tries < 1_000_000, "{tag}: a polling reap never saw the completion");
    }
    assert_eq!(out[0].slot, 3);
}

#[test]
fn plain_ring_reads_writes_and_syncs() {
    exercise("plain", EngineFlags::default());
}

#[test]
fn vectored_fixed_and_registered_variants_move_the_same_bytes() {
    exercise("vectored", EngineFlags { vectored: true, ..Default::default() });
    exercise("fixed", EngineFlags { fixedbufs: true, registerfiles: true, ..Default::default() });
}

#[test]
fn sqpoll_ring_works() {
    exercise("sqpoll", EngineFlags { sqthread_poll: true, registerfiles: true, ..Default::default() });
}

#[test]
fn setup_errors_say_why_and_what_to_do() {
    let m = uring_unavailable(&io::Error::from_raw_os_error(libc::ENOSYS));
    assert!(m.contains("no io_uring") && m.contains("libaio"), "{m}");
    let m = uring_unavailable(&io::Error::from_raw_os_error(libc::ENOMEM));
    assert!(m.contains("RLIMIT_MEMLOCK") && m.contains("ulimit -l"), "{m}");
    let m = uring_unavailable(&io::Error::from_raw_os_error(libc::EPERM));
    assert!(m.contains("io_uring_disabled") || m.contains("seccomp"), "{m}");
}
