//! Open flags and syncs are what the options say, as the kernel sees them (strace): dsync is
//! O_DSYNC (0x1000) for dd's `oflag=dsync`, io's `sync=dsync` and filebench's `dsync`, as GNU
//! dd, fio and filebench open, never O_SYNC (0x101000); dd's `conv=fdatasync` is fdatasync.

use crate::util::Bounded;
use crate::util::{require, stderr, Scratch, TempDir};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The open and sync calls (open, openat, openat2, fsync, fdatasync) of `fsarena run tmpfs
/// <workload> --no-store`, as strace prints them (descriptors with their paths), following
/// every thread and child.
fn opens_of(workload: &str) -> Vec<String> {
    let strace = require("strace");
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let scratch = Scratch::new(&format!("flags-{}", NEXT.fetch_add(1, Relaxed)));
    let wd = TempDir::new();
    let log = scratch.path.join("strace.log");
    let out = Command::new(strace)
        .args(["-f", "-qq", "-y", "-e", "trace=open,openat,openat2,fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_fsarena"))
        .args([
            "run",
            "--target",
            "tmpfs:size=256m",
            "--workload",
            workload,
            "--no-store",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--workdir",
        ])
        .arg(format!("{}/work", wd.0))
        .bounded_output()
        .expect("strace runs");
    assert!(out.status.success(), "{workload}: {}", stderr(&out));
    let text = std::fs::read_to_string(&log).expect("strace's log");
    text.lines().map(str::to_string).collect()
}

#[test]
fn dsync_opens_are_o_dsync_as_dd_fio_and_filebench_open() {
    for (workload, file) in [
        ("dd:bs=64k,count=16,oflag=dsync", "dd"),
        ("io:rw=write,bs=4k,size=256k,sync=dsync", "io"),
        ("filebench:name=filemicro_rwritedsync,filesize=1m,count=64,runtime=2", "bigfile"),
    ] {
        let opens = opens_of(workload);
        let dsync: Vec<&String> = opens.iter().filter(|l| l.contains("O_DSYNC")).collect();
        assert!(!dsync.is_empty(), "{workload}: no open with O_DSYNC:\n{}", opens.join("\n"));
        assert!(dsync.iter().any(|l| l.contains(file)), "{workload}: O_DSYNC opens name no {file} file: {dsync:?}");
        // strace names 0x101000 O_SYNC; no open of the run asks for it.
        let sync: Vec<&String> = opens.iter().filter(|l| l.contains("O_SYNC")).collect();
        assert!(sync.is_empty(), "{workload}: opened with O_SYNC: {sync:?}");
    }
}

#[test]
fn dds_conv_is_the_sync_it_names() {
    for (conv, want, not) in [("fsync", "fsync(", "fdatasync("), ("fdatasync", "fdatasync(", "fsync(")] {
        let calls = opens_of(&format!("dd:bs=64k,count=4,files=2,conv={conv}"));
        // The syncs of dd's files on the target (the run's own state file is synced too).
        let count = |name: &str| {
            calls
                .iter()
                .filter(|l| {
                    l.split_once(' ').is_some_and(|(_, c)| c.trim_start().starts_with(name) && c.contains("/dd."))
                })
                .count()
        };
        assert_eq!(count(want), 2, "conv={conv}: one {want}) a file:\n{}", calls.join("\n"));
        assert_eq!(count(not), 0, "conv={conv}: no {not})");
    }
}

/// The files of `fsarena run tmpfs --fio FILE` that `pwrite64` wrote to, in the order of
/// the calls (strace of every thread and child, descriptors with their paths).
fn pwrites_of(job: &str) -> Vec<String> {
    let strace = require("strace");
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let scratch = Scratch::new(&format!("layout-{}", NEXT.fetch_add(1, Relaxed)));
    let wd = TempDir::new();
    let file = scratch.path.join("j.fio");
    std::fs::write(&file, job).expect("job file");
    let log = scratch.path.join("strace.log");
    let out = Command::new(strace)
        .args(["-f", "-qq", "-y", "-e", "trace=pwrite64", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_fsarena"))
        .args(["run", "--target", "tmpfs:size=256m", "--fio"])
        .arg(&file)
        .args(["--no-store", "--repeat", "1", "--warmup", "0", "--workdir"])
        .arg(format!("{}/work", wd.0))
        .bounded_output()
        .expect("strace runs");
    assert!(out.status.success(), "{job}: {}", stderr(&out));
    let text = std::fs::read_to_string(&log).expect("strace's log");
    text.lines()
        .filter_map(|l| {
            let name = l.split_once("pwrite64(")?.1.split_once('<')?.1.split_once('>')?.0;
            Some(name.rsplit('/').next().unwrap_or(name).to_string())
        })
        .collect()
}

#[test]
fn files_are_laid_out_one_at_a_time_unless_create_serialize_is_0() {
    // Two jobs that read 64 MiB files each: fio (create_serialize=1, its default) writes one
    // file whole before the next; fsarena's layout too. The jobs only read, so every pwrite64
    // of the run is the layout's.
    let job = "[global]\nrw=read\nsize=64m\nbs=1m\n[a]\n[b]\n";
    let writes = pwrites_of(job);
    let files: Vec<&String> = writes.iter().filter(|f| f.starts_with("a.") || f.starts_with("b.")).collect();
    assert!(files.len() >= 4, "{writes:?}");
    // Runs of one file: serial layout gives exactly two.
    let runs = 1 + files.windows(2).filter(|w| w[0] != w[1]).count();
    assert_eq!(runs, 2, "laid out by turns: {files:?}");
}
