use super::*;
use std::sync::atomic::AtomicBool;

fn parse(spec: &str) -> Result<FilebenchWorkload, InputError> {
    FilebenchWorkload::from_spec(&Spec::parse(spec).unwrap())
}

fn user_file(text: &str) -> (String, tempdir::Dir) {
    let d = tempdir::Dir::new();
    let path = d.0.join("my.f");
    std::fs::write(&path, text).unwrap();
    (path.display().to_string(), d)
}

/// A scratch directory removed on drop.
mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = std::env::temp_dir().join(format!("fsarena-filebench-test-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn run(spec: &str) -> Result<Measurement, WorkloadError> {
    let d = tempdir::Dir::new();
    let stop = AtomicBool::new(false);
    let w = parse(spec).unwrap();
    let out = w.run(&RunEnv::quiet(&d.0, &stop)).map(fsarena_workload::one);
    assert_eq!(std::fs::read_dir(&d.0).unwrap().count(), 0, "files left by {spec}");
    out
}

#[test]
fn every_builtin_parses() {
    assert_eq!(BUILTINS.len(), NAMES.len());
    for (name, _) in BUILTINS {
        assert!(NAMES.contains(name));
        match parse(&format!("filebench:name={name}")) {
            Ok(w) => assert!(w.model().threads() > 0, "{name}"),
            Err(e) => panic!("{name}: {e}"),
        }
    }
    // oltp: 200 shadows, 10 database writers and a log writer by default.
    let o = parse("filebench:name=oltp").unwrap();
    assert_eq!(o.model().threads(), 211);
    let kinds: Vec<vocabulary::Kind> = o.model().flowops().map(|f| f.kind).collect();
    assert!(kinds.contains(&vocabulary::Kind::AioWrite) && kinds.contains(&vocabulary::Kind::AioWait));
    let w = parse("filebench:name=varmail").unwrap();
    let m = w.model();
    assert_eq!(m.run_secs, Some(60));
    assert_eq!(m.filesets[0].entries, 1000);
    assert_eq!(m.filesets[0].prealloc, 80);
    assert_eq!(m.filesets[0].size, SizeDist::Gamma { mean: 16384.0, shape: 1.5 });
    assert_eq!(m.threads(), 16);
    assert_eq!(m.flowops().count(), 13);
    assert_eq!(w.estimate(), Some(Duration::from_secs(60)));
    let f = parse("filebench:name=fileserver,nthreads=4,runtime=5s,nfiles=300").unwrap();
    assert_eq!((f.model().threads(), f.runtime, f.model().filesets[0].entries), (4, Duration::from_secs(5), 300));
    assert_eq!(parse("filebench:name=videoserver").unwrap().model().eventrate, 96.0);
}

#[test]
fn bad_input_names_file_line_and_what_is_accepted() {
    for (spec, want) in [
        ("filebench", "needs name="),
        ("filebench:name=varmial", "did you mean 'varmail'"),
        ("filebench:name=varmail,nfile=3", "'nfile' is neither an option of filebench nor a variable of varmail.f"),
        ("filebench:name=varmail,runtime=0", "runtime=0"),
        ("filebench:name=varmail,nthreads=100000", "at most"),
    ] {
        let e = parse(spec).err().unwrap().to_string();
        assert!(e.contains(want), "{spec}: {e}");
    }
    for (text, line, want) in [
        ("set $a=1\nflowop read name=x\n", 2, "a statement fsarena's filebench supports"),
        ("define fileset name=s,entries=$n\n", 1, "a $variable that is not set"),
        ("define fileset name=s,entries=4,colour=red\n", 1, "not a fileset attribute"),
        (
            "define process name=p\n{\nthread name=t\n{\nflowop openfile name=o,filesetname=nope\n}\n}\n",
            5,
            "filesetname= names no fileset or file defined: they are defined on line(s) none",
        ),
        ("define process name=p\n{\nthread name=t\n{\nflowop frobnicate name=o\n}\n}\n", 5, "not a flowop"),
        (
            "define process name=p\n{\nthread name=t\n{\nflowop read name=r,iosize=4k\n}\n}\n",
            5,
            "fd=0 is opened by no flowop",
        ),
        (
            "define fileset name=s,entries=1,size=1m\ndefine process name=p\n{\nthread name=t\n{\nflowop aiowrite name=w,filesetname=s,iosize=4k\n}\n}\n",
            6,
            "flowop aiowrite needs random",
        ),
        (
            "define fileset name=s,entries=1,size=1m\ndefine process name=p\n{\nthread name=t\n{\nflowop aiowrite name=w,filesetname=s,random\n}\n}\n",
            6,
            "flowop aiowrite needs iosize=BYTES",
        ),
        ("system \"rm -rf /\"\n", 1, "runs a shell command"),
        (
            "define randvar name=$x, type=tabular, randtable =\n{{50, 1k, 2k},\n {50, 4k, 8k}}\n",
            1,
            "random variables are not supported yet",
        ),
        ("set $a=1\nset $t=$a * 2\n", 2, "an expression in set is not supported yet"),
        ("set $s=cvar(type=cvar-normal,parameters=mean:1)\n", 1, "only cvar-gamma"),
        ("define process name=p\n{\nthread name=t\n", 0, "a '}' is missing"),
    ] {
        let (path, _d) = user_file(text);
        let e = parse(&format!("filebench:file={path}")).err().unwrap();
        let origin = if line == 0 { format!("filebench: file={path}") } else { format!("filebench: file={path}:{line}") };
        assert_eq!(e.origin, origin, "{text}: {e}");
        assert!(e.message.contains(want), "{text}: {e}");
    }
}

/// A model file= names may be any file: no error quotes a word of it, whatever the word is
/// and wherever it stands on a line.
#[test]
fn no_error_quotes_the_model_file() {
    let lines = [
        "set $n=10",
        "set mode quit firstdone",
        "define fileset name=s,path=/tmp,size=1m,entries=$n,prealloc=80,dirwidth=20",
        "define file name=f,size=4k,reuse,readonly",
        "define process name=p,instances=1",
        "thread name=t,memsize=10m,instances=1",
        "flowop read name=r,filesetname=s,iosize=4k,random,fd=1",
        "flowop createfile name=c,filesetname=s,fd=1",
        "flowop finishoncount name=x,value=3,target=r",
        "eventgen rate=10",
        "run 60",
        "set $g=cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)",
    ];
    let parse_file = |text: &str| {
        let (path, _d) = user_file(text);
        parse(&format!("filebench:file={path}")).map(drop).map_err(|e| e.to_string())
    };
    let alone = fsarena_workload::options::assert_never_quotes(&lines, |l| parse_file(&format!("{l}\n")));
    let in_a_thread = fsarena_workload::options::assert_never_quotes(&lines, |l| {
        parse_file(&format!("define process name=p\n{{\nthread name=t\n{{\n{l}\n}}\n}}\n"))
    });
    let checked = alone + in_a_thread;
    assert!(checked > 50, "only {checked} errors seen");
}

#[test]
fn varmail_and_fileserver_run_scaled_down_and_clean_up() {
    for name in ["varmail", "fileserver", "webserver", "webproxy"] {
        let m = run(&format!("filebench:name={name},nfiles=200,nthreads=2,runtime=1s")).unwrap();
        assert!(m.complete, "{name}");
        for f in parse(&format!("filebench:name={name}")).unwrap().model().flowops() {
            if f.kind != vocabulary::Kind::OpsLimit {
                assert!(m.counters[&format!("flowop.{}.ops", f.name)] > 0, "{name}: {} never ran", f.name);
            }
        }
        assert!(m.metric("ops_per_s").unwrap().value > 0.0, "{name}");
        assert!(m.counters["io.bytes"] > 0, "{name}");
    }
}

#[test]
fn firstdone_and_finish_conditions_end_the_run_at_the_exact_count() {
    let m = run("filebench:name=createfiles,nfiles=40,nthreads=3,meanfilesize=4k,runtime=30s").unwrap();
    assert_eq!(m.counters["flowop.createfile1.ops"], 40);
    // The thread that found the fileset full ends the run; another may not write its last file.
    let written = m.counters["flowop.writefile1.bytes"];
    assert!(written.is_multiple_of(4096) && (37 * 4096..=40 * 4096).contains(&written), "{written}");
    let m = run("filebench:name=makedirs,ndirs=50,meandirwidth=7,nthreads=2,runtime=30s").unwrap();
    assert_eq!(m.counters["flowop.mkdir1.ops"], 50);
    let m = run("filebench:name=removedirs,ndirs=50,meandirwidth=7,nthreads=2,runtime=30s").unwrap();
    assert_eq!(m.counters["flowop.dirremover.ops"], 50);
    let m = run("filebench:name=filemicro_seqwrite,count=16,iosize=64k,runtime=30s").unwrap();
    assert_eq!(m.counters["flowop.write-file.bytes"], 16 * 65536);
    let m = run("filebench:name=filemicro_rread,filesize=1m,iosize=4k,bytes=64k,runtime=30s").unwrap();
    assert!(m.counters["flowop.read-file.bytes"] > 64 * 1024);
    assert!(m.counters["flowop.read-file.ops"] <= 17 + 1);
}

#[test]
fn a_timeout_run_out_of_files_fails_as_filebench_says() {
    let (path, _d) = user_file(
        "define fileset name=s,entries=3,size=1k\n\
         define process name=p\n{\n  thread name=t\n  {\n    flowop createfile name=c,filesetname=s,fd=1\n    flowop closefile name=x,fd=1\n  }\n}\nrun 20\n",
    );
    let e = run(&format!("filebench:file={path}")).unwrap_err();
    assert!(e.message.contains("found no missing entry in fileset 's'"), "{}", e.message);
    assert_eq!(e.partial[0].counters["flowop.c.ops"], 3);
    assert!(!e.partial[0].complete);
}

#[test]
fn the_table_and_the_defaults_agree() {
    fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
}

#[test]
fn semaphores_blocks_and_the_event_generator_pace_the_threads() {
    // The waiter can pass its semblock only as often as the poster posts, and the run ends
    // when it has passed 50 times; the block passes once per wakeup.
    let (path, _d) = user_file(
        "define process name=p\n{\n  thread name=poster\n  {\n    flowop hog name=h,value=1000\n    flowop sempost name=post,target=wait,value=1\n  }\n\
           thread name=waiter\n  {\n    flowop semblock name=wait,value=1\n    flowop finishoncount name=fin,value=50,target=wait\n  }\n\
           thread name=sleeper\n  {\n    flowop block name=b\n  }\n\
           thread name=waker\n  {\n    flowop delay name=d,value=0.001\n    flowop wakeup name=w,target=b\n  }\n}\nrun 30\n",
    );
    let m = run(&format!("filebench:file={path}")).unwrap();
    assert_eq!(m.counters["flowop.wait.ops"], 50);
    assert!(m.counters["flowop.post.ops"] >= 50);
    assert!(m.counters["flowop.b.ops"] <= m.counters["flowop.w.ops"] + 1);
    // 100 events a second for one second: the eventlimit lets about 100 stats through.
    let (path, _d) = user_file(
        "eventgen rate=100\ndefine fileset name=f,entries=10,size=0,prealloc\n\
         define process name=p\n{\n  thread name=t,instances=2\n  {\n    flowop statfile name=s,filesetname=f\n    flowop eventlimit name=lim\n  }\n}\nrun 1\n",
    );
    let m = run(&format!("filebench:file={path}")).unwrap();
    let stats = m.counters["flowop.s.ops"];
    assert!((2..=150).contains(&stats), "{stats}");
}

#[test]
fn statfile_and_deletefile_on_an_open_fd_work_on_that_file() {
    // Each pass creates a file, stats it by its fd, deletes it by its fd and closes it: the
    // fileset never fills, and every delete hits the file just created.
    let (path, _d) = user_file(
        "define fileset name=s,entries=2,size=1k\n\
         define process name=p\n{\n  thread name=t\n  {\n    flowop createfile name=c,filesetname=s,fd=1\n\
             flowop statfile name=st,fd=1,filesetname=s\n    flowop deletefile name=d,fd=1,filesetname=s\n\
             flowop closefile name=x,fd=1\n    flowop finishoncount name=f,value=20,target=d\n  }\n}\nrun 30\n",
    );
    let m = run(&format!("filebench:file={path}")).unwrap();
    assert_eq!((m.counters["flowop.c.ops"], m.counters["flowop.st.ops"], m.counters["flowop.d.ops"]), (20, 20, 20));
}

#[test]
fn oltp_runs_scaled_down_with_asynchronous_writes() {
    let m =
        run("filebench:name=oltp,nshadows=4,ndbwriters=2,nfiles=2,filesize=1m,logfilesize=1m,usermode=1000,runtime=1s")
            .unwrap();
    assert!(m.complete);
    for op in ["lg-write", "lg-aiowait", "dbwrite-a", "dbwr-aiowait", "shadowread", "shadow-post-dbwr"] {
        assert!(m.counters[&format!("flowop.{op}.ops")] > 0, "{op} never ran: {:?}", m.counters);
    }
    // Every aiowrite moves its iosize, counted as it is queued (filebench's accounting).
    assert_eq!(m.counters["flowop.dbwrite-a.bytes"], m.counters["flowop.dbwrite-a.ops"] * 2048);
    assert_eq!(m.counters["flowop.lg-write.bytes"], m.counters["flowop.lg-write.ops"] * 256 * 1024);
    // The asynchronous flowops are in the IO summary, the writes in wr/s.
    let aio = ["lg-write", "lg-aiowait", "dbwrite-a", "dbwr-aiowait"].map(|o| m.counters[&format!("flowop.{o}.ops")]);
    assert!(m.counters["io.ops"] >= aio.iter().sum::<u64>());
    assert!(m.counters["io.writes"] >= aio[0] + aio[2]);
}

#[test]
fn aiowrite_counts_iosize_as_queued_and_aiowait_runs_once_a_pass() {
    // One thread queues 8 writes of 4k into a 64k file a pass and waits once; the run ends
    // after 64 writes, the rest reaped untimed at the thread's end.
    let (path, _d) = user_file(
        "define fileset name=s,entries=1,size=64k,prealloc\n\
         define process name=p\n{\n  thread name=t\n  {\n    flowop aiowrite name=w,filesetname=s,iosize=4k,random,iters=8\n\
             flowop aiowait name=wait\n    flowop finishoncount name=f,value=64,target=w\n  }\n}\nrun 30\n",
    );
    let m = run(&format!("filebench:file={path}")).unwrap();
    assert_eq!(m.counters["flowop.w.ops"], 64);
    assert_eq!(m.counters["flowop.w.bytes"], 64 * 4096);
    assert_eq!(m.counters["flowop.wait.ops"], 8);
    assert_eq!(m.counters["io.writes"], 64);
}

#[test]
fn a_blocking_post_runs_at_most_highwater_ahead_and_reaches_every_instance() {
    // The semblock takes 50 a pass with a highwater of 10: the posters may post 10 ahead,
    // plus the 50 each pass credits, so the waiters pass (filebench's System V pair) where a
    // plain cap at the highwater would leave them waiting forever. Each of the two waiters
    // has its own semaphore and every post reaches both: 20 passes take 500 posts, not 1000.
    let (path, _d) = user_file(
        "define process name=p\n{\n  thread name=poster,instances=2\n  {\n    flowop sempost name=post,target=wait,value=1,blocking\n  }\n\
           thread name=waiter,instances=2\n  {\n    flowop semblock name=wait,value=50,highwater=10\n    flowop finishoncount name=fin,value=20,target=wait\n  }\n}\nrun 30\n",
    );
    let m = run(&format!("filebench:file={path}")).unwrap();
    assert!((20..=21).contains(&m.counters["flowop.wait.ops"]), "{:?}", m.counters);
    let posts = m.counters["flowop.post.ops"];
    assert!((10 * 50..=11 * 50 + 10 + 2).contains(&posts), "{posts}");
}

#[test]
fn a_run_records_ops_and_mib_per_second() {
    let m = run("filebench:name=randomrw,filesize=1m,iosize=4k,nthreads=1,runtime=3s").unwrap();
    for name in ["ops_per_s", "mb_per_s"] {
        let s = &m.series[name];
        assert_eq!(s.values.len(), 3, "{name}: {s:?}");
        assert_eq!(s.interval_ns, 1_000_000_000);
        assert!(s.values.iter().all(|v| *v > 0.0), "{name}: {s:?}");
    }
    let total: f64 = m.series["ops_per_s"].values.iter().sum();
    let ops = m.counters["io.ops"] as f64;
    assert!((total - ops).abs() <= ops * 0.1, "{total} vs {ops}");
    assert_eq!(m.series["mb_per_s"].unit, "MiB/s");
}

/// The "creating N preallocated entries (B bytes)" line of one scaled-down run of `spec`.
fn layout_line(spec: &str) -> String {
    let d = tempdir::Dir::new();
    let stop = AtomicBool::new(false);
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |s: &str| seen.lock().unwrap().push(s.to_string());
    let env = RunEnv { progress: &progress, ..RunEnv::quiet(&d.0, &stop) };
    parse(spec).unwrap().run(&env).unwrap();
    let lines = seen.into_inner().unwrap();
    lines.into_iter().find(|l| l.contains("preallocated entries")).expect("the layout is announced")
}

#[test]
fn every_run_lays_out_the_same_file_sizes_as_filebench_does() {
    // filebench's layout generators are never seeded: every run has the same files. Sizes
    // drawn anew would give another byte total each run (1000 gamma draws: about ±2.6%).
    let spec = "filebench:name=varmail,nfiles=300,nthreads=1,runtime=100ms";
    let (a, b) = (layout_line(spec), layout_line(spec));
    assert_eq!(a, b);
    // The sizes are gamma draws, not one size: the byte total is no multiple of the count.
    let model = parse(spec).unwrap();
    let sets = run::layout(model.model());
    let (bytes, files) = sets[0].preallocated();
    assert!((201..300).contains(&files), "80% preallocated: {files}");
    assert_ne!(bytes % files, 0);
    let mean = bytes as f64 / files as f64;
    assert!((mean - 16384.0).abs() < 0.15 * 16384.0, "mean size {mean}");
}

/// filebench fails a run whose I/O does not fit its thread's memsize
/// (flowoplib_iobufsetup); fsarena says so before anything is created, naming the line.
#[test]
fn an_io_larger_than_its_threads_memsize_is_refused_at_its_line() {
    let model = |memsize: &str, flowop: &str| {
        format!(
            "define fileset name=s,path=/tmp,size=64k,entries=10,prealloc=100\n\
             define process name=p\n{{\n  thread name=t,memsize={memsize}\n  {{\n    {flowop}\n  }}\n}}\nrun 1\n"
        )
    };
    let check = |text: String| {
        let (path, _d) = user_file(&text);
        parse(&format!("filebench:file={path}")).map(drop).map_err(|e| e.to_string())
    };
    let e = check(model("1m", "flowop read name=r,filesetname=s,iosize=2m,fd=1")).unwrap_err();
    assert!(e.contains(":6:") && e.contains("2097152 bytes") && e.contains("memsize of 1048576"), "{e}");
    let e = check(model("8k", "flowop write name=w,filesetname=s,iosize=8k,directio,fd=1")).unwrap_err();
    assert!(e.contains("(+512 for directio)"), "{e}");
    // It fits: exactly memsize, or a whole-file read of iosize 0 (the file's size, at run time).
    check(model("2m", "flowop read name=r,filesetname=s,iosize=2m,fd=1")).unwrap();
    check(model("1m", "flowop readwholefile name=r,filesetname=s,fd=1")).unwrap();
    // No memsize: no limit.
    check(model("0", "flowop read name=r,filesetname=s,iosize=2m,fd=1")).unwrap();
}

/// Each thread's memsize is memory the run holds (filled at the thread's start, as
/// filebench's): the footprint counts it, so that a model that cannot fit is refused.
#[test]
fn the_footprint_counts_every_threads_memsize() {
    let w = parse("filebench:name=webserver").unwrap();
    let threads = w.model().threads();
    assert_eq!(threads, 100);
    let fp = w.footprint();
    assert!(fp.buffer_bytes >= threads * (10 << 20), "{}", fp.buffer_bytes);
    assert!(fp.buffer_bytes < threads * (12 << 20), "{}", fp.buffer_bytes);
}
