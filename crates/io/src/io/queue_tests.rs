//! The loop over the engines in-process, without root: the null engine at every queue depth
//! and batch setting moves exactly what the job asks, touches no file, and takes its syncs
//! through the engine; psync ignores iodepth; queued engines time submission (slat, lat).

use super::super::{IoWorkload, Workload};
use fsarena_core::{JobResult, Spec};
use fsarena_workload::RunEnv;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("fsarena-h5-queue-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
    fn is_empty(&self) -> bool {
        std::fs::read_dir(&self.0).unwrap().next().is_none()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(root: &Path, spec: &str) -> Vec<JobResult> {
    let w = IoWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap();
    let stop = AtomicBool::new(false);
    let env = RunEnv::quiet(root, &stop);
    let m = w.run(&env).unwrap_or_else(|e| panic!("{spec}: {}", e.message));
    assert!(m.iter().all(|m| m.complete), "{spec}");
    m.into_iter().flat_map(|m| m.fio.map(|d| d.jobs).unwrap_or_default()).collect()
}

/// (read ios, write ios, read bytes, write bytes, syncs) of the first job.
fn counts(j: &JobResult) -> (u64, u64, u64, u64, u64) {
    (j.read.total_ios, j.write.total_ios, j.read.io_bytes, j.write.io_bytes, j.sync.samples)
}

#[test]
fn null_moves_exactly_the_job_at_every_depth_and_batch() {
    let dir = Scratch::new("depths");
    let base =
        "io:ioengine=null,rw=randrw,rwmixread=70,bs=4k,size=4m,filesize=1g,nrfiles=2,numjobs=2,group_reporting=1";
    let reference = counts(&run(&dir.0, base)[0]);
    assert_eq!(reference.0 + reference.1, 2 * 1024, "4 MiB of 4 KiB blocks per clone, two clones");
    assert_eq!(reference.2 + reference.3, 2 * (4 << 20));
    for extra in [
        "iodepth=2",
        "iodepth=32",
        "iodepth=32,iodepth_batch_submit=8",
        "iodepth=32,iodepth_batch_submit=0,iodepth_batch_complete_min=32",
        "iodepth=16,iodepth_batch_complete_min=4,iodepth_batch_complete_max=16,iodepth_low=4",
        "iodepth=8,iodepth_batch_complete_min=0,iodepth_batch_complete_max=0",
        "iodepth=7,iodepth_batch_submit=3,iodepth_batch_complete_min=2",
    ] {
        let got = counts(&run(&dir.0, &format!("{base},{extra}"))[0]);
        // Same choices in the same order, whatever the queue: the same counts.
        assert_eq!(got, reference, "{extra}");
    }
    assert!(dir.is_empty(), "the null engine laid out or left files");
}

#[test]
fn null_takes_syncs_through_the_engine() {
    let dir = Scratch::new("syncs");
    for depth in [1, 8] {
        let jobs =
            run(&dir.0, &format!("io:ioengine=null,rw=write,bs=4k,size=1m,fsync=16,end_fsync=1,iodepth={depth}"));
        // 256 writes and a sync after every 16 but the last, as fio (a due sync goes before
        // the next write); the end_fsync is not among the job's syncs.
        assert_eq!(counts(&jobs[0]), (0, 256, 0, 1 << 20, 256 / 16 - 1), "iodepth={depth}");
    }
    assert!(dir.is_empty());
}

#[test]
fn null_time_based_runs_until_runtime() {
    let dir = Scratch::new("timed");
    for depth in [1, 16] {
        let jobs = run(
            &dir.0,
            &format!("io:ioengine=null,rw=randread,bs=4k,size=64m,runtime=200ms,time_based=1,iodepth={depth}"),
        );
        let j = &jobs[0];
        assert!(j.read.total_ios > 16384, "iodepth={depth}: {} I/Os in 200 ms", j.read.total_ios);
        assert!(j.job_runtime.0 >= 200_000_000, "{:?}", j.job_runtime);
        assert_eq!(j.read.io_bytes, j.read.total_ios * 4096);
    }
}

#[test]
fn psync_ignores_iodepth_and_moves_the_same() {
    let dir = Scratch::new("psync");
    let base = "io:rw=randrw,bs=4k,size=512k,fsync=8";
    let one = counts(&run(&dir.0, base)[0]);
    assert_eq!(one.0 + one.1, 128);
    assert_eq!(counts(&run(&dir.0, &format!("{base},iodepth=64,iodepth_batch_submit=16"))[0]), one);
    assert!(dir.is_empty(), "psync's files are removed at the end");
}

#[test]
fn the_live_counter_sees_every_completion_at_every_depth() {
    let dir = Scratch::new("live");
    for depth in [1, 16] {
        let spec = format!("io:ioengine=null,rw=randrw,bs=4k,size=2m,numjobs=3,iodepth={depth}");
        let w = IoWorkload::from_spec(&Spec::parse(&spec).unwrap()).unwrap();
        let stop = AtomicBool::new(false);
        let live = fsarena_workload::Live::new();
        let env = RunEnv {
            root: &dir.0,
            client_roots: vec![dir.0.to_path_buf()],
            stop: &stop,
            progress: &|_| {},
            keep_files: false,
            drop_caches: None,
            remount: None,
            live: &live,
            rendezvous: None,
            team: None,
            host: None,
            target: None,
        };
        w.run(&env).unwrap();
        // 2 MiB of 4 KiB blocks per clone, three clones; the batches are flushed at the end.
        assert_eq!(
            live.sample(),
            fsarena_workload::LiveSample { ops: 3 * 512, bytes: 3 * (2 << 20) },
            "iodepth={depth}"
        );
    }
}

#[test]
fn queued_engines_time_submission_and_sync_ones_do_not() {
    let dir = Scratch::new("slat");
    // Queued (null above iodepth 1), with group_reporting merging two clones: every I/O has
    // a slat, a clat and a lat, and lat = slat + clat to the nanosecond's rounding.
    let spec = "io:ioengine=null,rw=randrw,bs=4k,size=1m,iodepth=8,iodepth_batch_submit=4,numjobs=2,group_reporting=1";
    let j = &run(&dir.0, spec)[0];
    for d in [&j.read, &j.write] {
        let lat = d.total_lat.as_ref().expect("a queued engine measures lat");
        assert_eq!((d.slat.samples, d.clat.samples, lat.samples), (d.total_ios, d.total_ios, d.total_ios));
        assert!(d.total_ios > 0);
        assert!(lat.mean + 1.0 >= d.slat.mean + d.clat.mean && lat.mean <= d.slat.mean + d.clat.mean + 1.0, "{d:?}");
        assert!(lat.min >= d.slat.min && lat.min >= d.clat.min && lat.max >= d.clat.max, "{d:?}");
        assert!(d.slat.percentiles.is_empty(), "slat keeps no percentiles (fio's slat_percentiles=0)");
        assert_eq!(d.lat_histogram.as_ref().map(|h| h.len()), Some(d.total_ios));
    }
    // Synchronous (null at depth 1, psync): no slat, and lat is clat.
    for spec in ["io:ioengine=null,rw=randread,bs=4k,size=1m", "io:rw=randread,bs=4k,size=256k,iodepth=8"] {
        let r = &run(&dir.0, spec)[0].read;
        assert!(r.total_ios > 0, "{spec}");
        assert_eq!((r.slat.samples, r.total_lat.is_none(), r.lat().samples), (0, true, r.clat.samples), "{spec}");
        assert!(r.lat_histogram.is_none(), "{spec}");
    }
    assert!(dir.is_empty());
}
