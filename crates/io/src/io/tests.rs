//! Runs of the `io` workload in a scratch directory: planning cost, planted objects and
//! failed thread spawns.

use super::*;
use fsarena_workload::gate::FAIL_SPAWN_AT;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let path = base.join(format!("fsarena-h2-io-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
    fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn workload(spec: &str) -> IoWorkload {
    IoWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap()
}

fn run(root: &Path, w: &IoWorkload) -> Result<Measurement, WorkloadError> {
    let stop = AtomicBool::new(false);
    let env = RunEnv::quiet(root, &stop);
    w.run(&env).map(fsarena_workload::one)
}

#[test]
fn planning_is_linear_in_clones_and_files() {
    // 100,000 clones: the old search of the file list made this 5·10^9 comparisons. Linear
    // is held by a ratio measured side by side, not by a time: ten times the clones take
    // about ten times as long (a quadratic plan takes a hundred times), on any machine load.
    let stop = AtomicBool::new(false);
    let plan = |clones: usize| {
        let w = workload(&format!("io:rw=randread,size=64k,numjobs={clones},thread=1"));
        let group: Vec<&JobDef> = w.jobs.iter().collect();
        let t = Instant::now();
        let (specs, needs) =
            plan_group(&[Path::new("/nonexistent")], &group, &[0], &stop, (1, &std::sync::Arc::from(Vec::new())))
                .unwrap();
        assert_eq!((specs.len(), needs.len()), (clones, clones));
        t.elapsed().as_secs_f64()
    };
    // Each plan's best of its tries, so a pause of the machine in one try changes nothing.
    let small = (0..3).map(|_| plan(10_000)).fold(f64::MAX, f64::min);
    let large = (0..2).map(|_| plan(100_000)).fold(f64::MAX, f64::min);
    assert!(
        large / small < 40.0,
        "10x the clones took {:.1}x as long ({large:.3} s against {small:.4} s)",
        large / small
    );
    // One shared file is one need, however many clones use it.
    let w = workload("io:rw=randwrite,size=64k,numjobs=50000,filename=shared,thread=1");
    let group: Vec<&JobDef> = w.jobs.iter().collect();
    let (specs, needs) =
        plan_group(&[Path::new("/x")], &group, &[0], &stop, (1, &std::sync::Arc::from(Vec::new()))).unwrap();
    assert_eq!((specs.len(), needs.len()), (50_000, 1));
    // Ctrl-C stops planning.
    stop.store(true, Ordering::Relaxed);
    assert!(plan_group(&[Path::new("/x")], &group, &[0], &stop, (1, &std::sync::Arc::from(Vec::new())))
        .unwrap_err()
        .contains("interrupted"));
}

#[test]
fn a_planted_link_is_not_followed_and_foreign_files_stay() {
    let outside = Scratch::new("outside");
    let victim = outside.0.join("victim.0.0");
    std::fs::write(&victim, b"precious").unwrap();
    let target = Scratch::new("target");
    std::os::unix::fs::symlink(&victim, target.0.join("j.0.0")).unwrap();
    let e = run(&target.0, &workload("io:name=j,rw=write,size=64k")).unwrap_err();
    assert!(e.message.contains("symbolic link"), "{}", e.message);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(target.entries(), vec!["j.0.0"], "the link stays, nothing else is left");
    // A FIFO at a job file's name: refused, not waited on.
    rustix::fs::mknodat(
        rustix::fs::CWD,
        target.0.join("r.0.0"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let e = run(&target.0, &workload("io:name=r,rw=read,size=64k")).unwrap_err();
    assert!(e.message.contains("not a regular file"), "{}", e.message);
    // A regular file that was there is used, as fio does, and left in place.
    std::fs::write(target.0.join("k.0.0"), vec![7u8; 64 << 10]).unwrap();
    run(&target.0, &workload("io:name=k,rw=read,size=64k")).unwrap();
    assert!(target.0.join("k.0.0").exists());
    // What the workload created goes.
    run(&target.0, &workload("io:name=new,rw=write,size=64k,nrfiles=3")).unwrap();
    assert_eq!(target.entries(), vec!["j.0.0", "k.0.0", "r.0.0"]);
}

#[test]
fn files_created_by_an_earlier_repetition_are_removed_by_the_last() {
    let target = Scratch::new("reps");
    let w = workload("io:name=rep,rw=read,size=64k,numjobs=2");
    let stop = AtomicBool::new(false);
    let env = |keep_files| RunEnv {
        root: &target.0,
        client_roots: vec![target.0.to_path_buf()],
        stop: &stop,
        progress: &|_| {},
        keep_files,
        drop_caches: None,
        remount: None,
        live: fsarena_workload::Live::unused(),
        rendezvous: None,
        team: None,
        host: None,
        target: None,
    };
    w.run(&env(true)).unwrap();
    assert_eq!(target.entries(), vec!["rep.0.0", "rep.1.0"]);
    w.run(&env(false)).unwrap();
    assert!(target.entries().is_empty(), "{:?}", target.entries());
}

#[test]
fn clients_place_each_clients_jobs_under_its_root_and_count_them_apart() {
    // Two directories stand in for two clients' mounts (a shared filesystem shows both the
    // same files; here each keeps its own, so placement shows).
    let (a, b) = (Scratch::new("client-a"), Scratch::new("client-b"));
    let stop = AtomicBool::new(false);
    for spec in [
        "io:name=c,rw=write,size=64k,numjobs=2,clients=2,thread=1",
        "io:name=c,rw=read,size=64k,numjobs=2,clients=2,thread=1",
    ] {
        let w = workload(spec);
        let env = |keep_files| RunEnv {
            root: &a.0,
            client_roots: vec![a.0.clone(), b.0.clone()],
            stop: &stop,
            progress: &|_| {},
            keep_files,
            drop_caches: None,
            remount: None,
            live: fsarena_workload::Live::unused(),
            rendezvous: None,
            team: None,
            host: None,
            target: None,
        };
        let m = fsarena_workload::one(w.run(&env(true)).unwrap());
        // Clones numbered across clients: client 1 has c.0, c.1; client 2 c.2, c.3.
        assert_eq!(a.entries(), vec!["c.0.0", "c.1.0"], "{spec}");
        assert_eq!(b.entries(), vec!["c.2.0", "c.3.0"], "{spec}");
        let d = if spec.contains("rw=read") { "read" } else { "write" };
        assert_eq!(m.counters[&format!("{d}_bytes")], 4 * 65536, "{spec}");
        assert_eq!(m.counters[&format!("client1.{d}_bytes")], 2 * 65536, "{spec}");
        assert_eq!(m.counters[&format!("client2.{d}_bytes")], 2 * 65536, "{spec}");
        let fair = m.metric("client_fairness").unwrap().value;
        assert!(fair > 0.0 && fair <= 1.0, "{spec}: {fair}");
        assert!(m.metric("client_bw_min").unwrap().value <= m.metric("client_bw_max").unwrap().value);
        // The last repetition removes every client's files, each through its own root.
        w.run(&env(false)).unwrap();
        assert!(a.entries().is_empty() && b.entries().is_empty(), "{:?} {:?}", a.entries(), b.entries());
    }
    // One client: no per-client figures, fio's own output.
    let m = run(&a.0, &workload("io:name=c,rw=write,size=64k,numjobs=2,thread=1")).unwrap();
    assert!(m.metric("client_fairness").is_none() && !m.counters.contains_key("client1.write_bytes"));
    // More clients than roots: refused before anything is created.
    let e = run(&a.0, &workload("io:name=c,rw=write,size=64k,clients=3,thread=1")).unwrap_err();
    assert!(e.message.contains("clients=3") && e.message.contains("1 client mount"), "{}", e.message);
    assert!(a.entries().is_empty());
}

/// The descriptors above stderr that the forked job processes of this process hold: pid and
/// fd numbers, read from /proc while the jobs run.
fn job_process_fds() -> Vec<(u32, Vec<(u32, String)>)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let kids = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in kids.split_whitespace().filter_map(|p| p.parse::<u32>().ok()) {
            let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
            let fds = dir
                .flatten()
                .filter_map(|e| {
                    let fd = e.file_name().to_str()?.parse::<u32>().ok()?;
                    Some((fd, std::fs::read_link(e.path()).ok()?.to_string_lossy().into_owned()))
                })
                .filter(|(fd, _)| *fd > 2)
                .collect();
            out.push((pid, fds));
        }
    }
    out
}

#[test]
fn job_processes_hold_only_their_own_descriptors_while_other_runs_fork() {
    // A pipe like another run's start pipe, opened before the forks: a job process that kept
    // a copy of its write end would keep that run's children from seeing its EOF, and two
    // runs in one process (the tests, a suite's steps) could each wait for the other's.
    let (theirs_r, theirs_w) = super::process::pipe_for_tests();
    let theirs = std::fs::read_link(format!("/proc/self/fd/{}", theirs_w.as_raw_fd())).unwrap();
    let theirs = theirs.to_string_lossy().into_owned();
    let (a, b) = (Scratch::new("fds-a"), Scratch::new("fds-b"));
    let spec = "io:ioengine=null,rw=read,bs=4k,size=1m,numjobs=2,time_based=1,runtime=3s";
    // Plain threads, not scoped ones: without the fix the two runs wait on each other for
    // ever, and the test must fail on the descriptors it saw rather than hang joining them.
    let runs = [&a, &b].map(|d| {
        let root = d.0.clone();
        std::thread::spawn(move || run(&root, &workload(spec)).map(|m| m.counters["read_bytes"]))
    });
    // Sample while both runs' four job processes are up; each must have closed what it does
    // not use (the fork and the close are one step apart, hence the settling time).
    let mut seen = Vec::new();
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(50));
        if job_process_fds().len() >= 4 {
            std::thread::sleep(Duration::from_millis(300));
            seen = job_process_fds();
            break;
        }
    }
    drop((theirs_r, theirs_w));
    assert!(seen.len() >= 4, "the four job processes were never seen: {seen:?}");
    for (pid, fds) in &seen {
        // The root, the result pipe's write end and the start pipe's read end, nothing else.
        assert!(fds.len() <= 3, "process {pid} holds {fds:?}");
        assert!(
            fds.iter().all(|(_, link)| *link != theirs),
            "process {pid} holds another run's pipe {theirs}: {fds:?}"
        );
    }
    for r in runs {
        assert!(r.join().unwrap().unwrap() > 0);
    }
}

#[test]
fn a_failed_thread_spawn_stops_the_others_and_cleans_up() {
    let target = Scratch::new("spawn");
    FAIL_SPAWN_AT.with(|f| f.set(Some(3)));
    let t = Instant::now();
    // thread=1: the failure is injected where threads are spawned (processes are the default).
    let outcome = run(&target.0, &workload("io:name=s,rw=write,size=64k,numjobs=8,time_based,runtime=60,thread=1"));
    FAIL_SPAWN_AT.with(|f| f.set(None));
    let e = outcome.unwrap_err();
    assert!(e.message.contains("cannot start io job thread 4 of 8"), "{}", e.message);
    assert!(t.elapsed().as_secs() < 30, "the started jobs ran on: {:?}", t.elapsed());
    assert!(target.entries().is_empty(), "{:?}", target.entries());
}

#[test]
fn the_measurement_keeps_every_samples_histogram_and_each_clone_its_own() {
    let dir = Scratch::new("histograms");
    // Two clones: 64 reads and 64 writes each (rw=rw), an fsync every 8 writes.
    let m = run(&dir.0, &workload("io:rw=rw,bs=4k,size=512k,numjobs=2,fsync=8")).unwrap();
    let jobs = m.jobs();
    assert_eq!(jobs.len(), 2);
    let read: fn(&JobResult) -> u64 = |j| j.read.total_ios;
    let write: fn(&JobResult) -> u64 = |j| j.write.total_ios;
    for (op, ios) in [("read", read), ("write", write)] {
        let total: u64 = jobs.iter().map(ios).sum();
        assert_eq!(m.latency(op).unwrap().len(), total, "{op}");
        assert_eq!(m.counters[&format!("{op}_ios")], total);
        // Each clone's own histogram; together they are the measurement's, exactly.
        let mut merged = LatencyHistogram::new();
        for j in jobs {
            let own = fsarena_core::fio::job_latency(&m, j, op).unwrap();
            assert_eq!(own.len(), ios(j));
            merged.merge(own);
        }
        assert_eq!(&merged, m.latency(op).unwrap());
        assert_eq!(m.metric(&format!("{op}_lat_p99")).unwrap().value, merged.percentile(99.0) as f64);
    }
    assert_eq!(m.latency("sync").unwrap().len(), jobs.iter().map(|j| j.sync.samples).sum::<u64>());
    // One job: its histograms are stored once, in the measurement, and still found for it.
    let one = run(&dir.0, &workload("io:rw=read,bs=4k,size=256k")).unwrap();
    let job = &one.jobs()[0];
    assert!(job.read.clat_histogram.is_none());
    assert_eq!(fsarena_core::fio::job_latency(&one, job, "read").unwrap().len(), 64);
}

/// The verify keys fio's users script integrity runs with: verify_backlog checks during the
/// job, verify_state_save writes down what was written, verify_only with verify_state_load
/// checks exactly that later, counting every bad block (verify_fatal=0) or stopping at the
/// first (verify_fatal=1).
#[test]
fn verify_backlog_state_save_and_verify_only_find_every_damaged_block() {
    let dir = Scratch::new("verify-only");
    let m =
        run(&dir.0, &workload("io:name=v,rw=randwrite,bs=4k,size=1m,verify=crc32c,verify_backlog=16,keep=1")).unwrap();
    assert_eq!(m.counters.get("bytes_verified").copied(), Some(1 << 20), "{:?}", m.counters);
    assert_eq!(m.counters.get("verify_errors").copied(), Some(0));
    assert_eq!(dir.entries(), ["local-v-0-verify.state", "v.0.0"]);
    let state: verify::VerifyState =
        serde_json::from_slice(&std::fs::read(dir.0.join("local-v-0-verify.state")).unwrap()).unwrap();
    assert_eq!((state.unit, state.files[0].1.iter().map(|w| w.count_ones()).sum::<u32>()), (4096, 256));
    let only = "io:name=v,rw=randwrite,bs=4k,size=1m,verify=crc32c,verify_only=1,verify_state_load=1,keep=1";
    let clean = run(&dir.0, &workload(only)).unwrap();
    assert_eq!(
        (clean.counters.get("bytes_verified").copied(), clean.counters.get("write_ios").copied()),
        (Some(1 << 20), None)
    );
    // Two blocks damaged behind the job's back.
    let file = std::fs::OpenOptions::new().write(true).open(dir.0.join("v.0.0")).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, b"XX", 5 * 4096 + 100).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, b"XX", 9 * 4096 + 100).unwrap();
    let err = run(&dir.0, &workload(only)).unwrap_err();
    assert!(err.message.contains("at offset 20480") && err.message.contains("2 blocks failed"), "{}", err.message);
    assert_eq!(err.partial[0].counters.get("verify_errors").copied(), Some(2));
    let err = run(&dir.0, &workload(&format!("{only},verify_fatal=1"))).unwrap_err();
    assert_eq!(err.partial[0].counters.get("verify_errors").copied(), Some(1), "{}", err.message);
    // Without the state file, verify_state_load names what is missing.
    std::fs::remove_file(dir.0.join("local-v-0-verify.state")).unwrap();
    let err = run(&dir.0, &workload(only)).unwrap_err();
    assert!(err.message.contains("no saved state") && err.message.contains("verify_state_save=1"), "{}", err.message);
}

#[test]
fn verify_keys_without_verify_are_refused() {
    for spec in [
        "io:rw=write,size=1m,verify_only=1",
        "io:rw=write,size=1m,verify_backlog=8",
        "io:rw=write,size=1m,verify=crc32c,verify_state_load=1",
    ] {
        let e = IoWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap_err().to_string();
        assert!(e.contains("verify"), "{spec}: {e}");
    }
}

#[test]
fn file_engines_time_one_call_per_file_and_count_the_files_bytes() {
    // As fio 3.33 (checked with it): each file's I/Os count in bytes and I/Os, while the
    // latency recorded is the call, once per file and pass, in the job's direction.
    let dir = Scratch::new("file-engines");
    for (spec, dir_name, ios, calls) in [
        ("io:name=fc,ioengine=filecreate,nrfiles=20,filesize=4k,thread=1", "read", 20, 20),
        ("io:name=fc,ioengine=filecreate,nrfiles=20,filesize=4k,bs=1k,rw=write", "write", 80, 20),
        ("io:name=fs,ioengine=filestat,nrfiles=20,filesize=4k,loops=3,stat_type=statx", "read", 60, 60),
        ("io:name=fd,ioengine=filedelete,nrfiles=20,filesize=4k", "read", 20, 20),
    ] {
        let m = run(&dir.0, &workload(spec)).unwrap();
        let job = &m.jobs()[0];
        let d = if dir_name == "read" { &job.read } else { &job.write };
        assert_eq!((d.total_ios, d.io_bytes), (ios, ios * if spec.contains("bs=1k") { 1024 } else { 4096 }), "{spec}");
        assert_eq!(m.latency(dir_name).unwrap().len(), calls, "{spec}");
        // fio's lat has no samples for these engines (FIO_NOSTATS): N=0, not clat's.
        assert_eq!(d.lat().samples, 0, "{spec}");
        // What filecreate made is removed; filestat's and filedelete's layout too.
        assert!(dir.entries().is_empty(), "{spec}: {:?}", dir.entries());
    }
    // fio's filecreate example: 16 x 31,250 files, none held open (so within any fd limit).
    let big = workload("io:name=t,ioengine=filecreate,nrfiles=31250,filesize=4k,numjobs=16");
    assert_eq!(big.footprint().open_files, 0);
    // A file that was there before is the user's: filecreate opens it and leaves it.
    std::fs::write(dir.0.join("fc.0.0"), b"mine").unwrap();
    run(&dir.0, &workload("io:name=fc,ioengine=filecreate,nrfiles=2,filesize=4k")).unwrap();
    assert_eq!(dir.entries(), vec!["fc.0.0"]);
    assert_eq!(std::fs::read(dir.0.join("fc.0.0")).unwrap(), b"mine");
}
