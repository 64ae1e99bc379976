//! The `filebench` workload end to end: personalities scaled down on real filesystems with
//! filebench's breakdown and summary, a user's .f file run unchanged, bad files refused.

use crate::util::Bounded;
use crate::util::{run, stderr, stdout, Scratch};

/// The "Per-Operation Breakdown" lines of `text`: flowop name and ops, per block.
fn breakdowns(text: &str) -> Vec<Vec<(String, u64)>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<(String, u64)>> = None;
    for line in text.lines() {
        if line.ends_with(": Per-Operation Breakdown") {
            cur = Some(Vec::new());
        } else if line.contains(": IO Summary: ") {
            out.extend(cur.take());
        } else if let Some(rows) = cur.as_mut() {
            let mut words = line.split_whitespace();
            let (Some(name), Some(ops)) = (words.next(), words.next()) else { continue };
            let ops = ops.strip_suffix("ops").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"));
            rows.push((name.to_string(), ops));
        }
    }
    out
}

#[test]
fn varmail_and_fileserver_on_tmpfs_and_ext4_print_filebenchs_breakdown() {
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--target",
        "ext4:size=512m",
        "--workload",
        // 800 entries: a delete is skipped when the other thread has its file open (as
        // filebench does), so creates outpace deletes; 200 entries' 40 missing ones ran out
        // within 2 s on a loaded machine (filebench's NORSC: the run stops incomplete).
        "filebench:name=varmail,nfiles=800,nthreads=2,runtime=2",
        "--workload",
        "filebench:name=fileserver,nfiles=800,nthreads=2,runtime=2",
        "--no-store",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let blocks = breakdowns(&text);
    assert_eq!(blocks.len(), 4, "two personalities on two targets: {text}");
    let varmail = ["deletefile1", "createfile2", "appendfilerand2", "fsyncfile2", "readfile4", "closefile4"];
    let fileserver = ["createfile1", "wrtfile1", "appendfilerand1", "readfile1", "deletefile1", "statfile1"];
    for rows in &blocks {
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        let want = if names.contains(&"fsyncfile2") { &varmail } else { &fileserver };
        for op in want {
            let ops = rows.iter().find(|(n, _)| n == op).map(|r| r.1);
            assert!(ops.unwrap_or(0) > 0, "{op}: {ops:?} in {rows:?}");
        }
        // filebench lists the last-defined flowop first.
        assert!(names[0] == "closefile4" || names[0] == "statfile1", "{names:?}");
    }
    let summaries: Vec<&str> = text.lines().filter(|l| l.contains(": IO Summary: ")).collect();
    assert_eq!(summaries.len(), 4, "{text}");
    for s in summaries {
        assert!(s.contains(" ops/s ") && s.contains(" rd/wr ") && s.ends_with("ms/op"), "{s}");
    }
    assert_eq!(text.matches("Latency percentiles (ms, fsarena):").count(), 4, "{text}");
}

#[test]
fn oltp_scaled_down_on_tmpfs_runs_its_asynchronous_writes_through_io_uring() {
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--workload",
        "filebench:name=oltp,nshadows=4,ndbwriters=2,runtime=3",
        "--no-store",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let blocks = breakdowns(&text);
    assert_eq!(blocks.len(), 1, "{text}");
    let ops = |name: &str| blocks[0].iter().find(|(n, _)| n == name).map_or(0, |r| r.1);
    // lg's aiowait comes before its semblock, so a pass always reaches it. dbwr's comes after
    // a semblock that waits for 1000 shadow posts, which a 3 s run on a busy machine may not
    // give: its count is checked against the posts, not required.
    for op in ["lg-write", "lg-aiowait", "dbwrite-a", "shadowread", "shadow-post-lg"] {
        assert!(ops(op) > 0, "{op}: {:?}", blocks[0]);
    }
    // dbwr issues 100 aiowrites (iters=100) per pass, and waits once per 1000 posts. Each post
    // reaches both dbwr instances (ndbwriters=2), so each may pass once per 1000 of them; a
    // semblock the run's end interrupts passes no more.
    assert!(ops("dbwrite-a") >= 100 * ops("dbwr-aiowait").max(1), "{:?}", blocks[0]);
    assert!(ops("dbwr-aiowait") <= 2 * (ops("shadow-post-dbwr") / 1000), "{:?}", blocks[0]);
}

#[test]
fn a_users_file_runs_unchanged_and_leaves_nothing() {
    let dir = Scratch::new("filebench-user");
    let files = Scratch::new("filebench-user-files");
    let f = files.path.join("mine.f");
    // As a user writes one: comments, variables, a continued line, a gamma size, eventgen.
    std::fs::write(
        &f,
        "# my own model\nset $dir=/tmp\nset $n=50\nset $size=cvar(type=cvar-gamma,parameters=mean:8192;gamma:1.5)\n\
         eventgen rate=1000\n\
         define fileset name=docs,path=$dir,size=$size,entries=$n,dirwidth=10,prealloc=100,readonly\n\
         define process name=reader,instances=2\n{\n  thread name=t,memsize=1m,instances=1\n  {\n\
             flowop openfile name=open,filesetname=docs,fd=1\n\
             flowop readwholefile name=slurp,fd=1,\n         iosize=64k\n\
             flowop closefile name=close,fd=1\n    flowop opslimit name=limit\n  }\n}\n\
         echo \"loaded\"\nrun 2\n",
    )
    .expect("write");
    let out =
        run(&["run", "--target", &dir.spec(), "--workload", &format!("filebench:file={}", f.display()), "--no-store"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = breakdowns(&stdout(&out));
    assert_eq!(rows.len(), 1, "{}", stdout(&out));
    let ops = |name: &str| rows[0].iter().find(|(n, _)| n == name).map_or(0, |r| r.1);
    assert!(ops("slurp") > 0 && ops("open") > 0, "{rows:?}");
    // eventgen at 1000 events a second caps the I/O flowops at about 2000 over 2 s.
    assert!(ops("open") + ops("slurp") + ops("close") < 4000, "{rows:?}");
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn bad_files_exit_2_with_file_and_line_before_anything_is_created() {
    let dir = Scratch::new("filebench-bad");
    let files = Scratch::new("filebench-bad-files");
    let f = files.path.join("bad.f");
    std::fs::write(&f, "define fileset name=s,entries=10\ndefine process name=p\n{\nthread name=t\n{\nflowop rename name=r,filesetname=s\n}\n}\n")
        .expect("write");
    let seq = files.path.join("seq.f");
    std::fs::write(&seq, "define fileset name=s,entries=10\ndefine process name=p\n{\nthread name=t\n{\nflowop aiowrite name=w,filesetname=s,iosize=2k\n}\n}\n")
        .expect("write");
    for (workload, want) in [
        (format!("filebench:file={}", f.display()), format!("file={}:6: not a flowop", f.display())),
        (
            format!("filebench:file={}", seq.display()),
            format!("file={}:6: flowop aiowrite needs random", seq.display()),
        ),
        (
            "filebench:name=varmail,nosuchvar=1".to_string(),
            "'nosuchvar' is neither an option of filebench nor a variable".into(),
        ),
        ("personality:name=varmail,nfiles=100000000".to_string(), "".into()),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", &workload, "--no-store"]);
        if want.is_empty() {
            // Too many files for the target: refused by the footprint check.
            assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        } else {
            assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
            assert!(stderr(&out).contains(&want), "{workload}: {}", stderr(&out));
        }
        assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
    }
}

/// The calls of `syscall` in an `strace -c` summary.
fn strace_calls(summary: &str, syscall: &str) -> u64 {
    summary
        .lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            // % time, seconds, usecs/call, calls, [errors,] syscall
            (w.last() == Some(&syscall)).then(|| w[3].parse().unwrap_or_else(|_| panic!("{l}")))
        })
        .unwrap_or(0)
}

#[test]
fn every_fsync_flowop_is_one_fsync_call_as_in_filebench() {
    // filebench's fsync flowop is one fsync(2) on the flowop's fd (fb_lfs_fsync), not a sync
    // of the file system: counted below the workload, by strace, the fsync calls must be the
    // fsync flowops of the breakdown, one each (fsarena's own few fdatasync calls, of its
    // state file, are not fsync).
    let strace = crate::util::require("strace");
    let dir = Scratch::new("fsync-calls");
    let counts = Scratch::new("fsync-calls-strace");
    let summary = counts.path.join("strace.txt");
    let out = std::process::Command::new(strace)
        .args(["-f", "-qq", "-c", "-e", "trace=fsync,fdatasync,syncfs,sync", "-o"])
        .arg(&summary)
        .arg(env!("CARGO_BIN_EXE_fsarena"))
        .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
        .args(["run", "--repeat", "1", "--warmup", "0", "--no-store", "--no-drop-caches", "--target"])
        .arg(dir.spec())
        .args(["--workload", "filebench:name=varmail,nfiles=800,nthreads=2,runtime=1"])
        .bounded_output()
        .expect("strace runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let blocks = breakdowns(&stdout(&out));
    assert_eq!(blocks.len(), 1, "{}", stdout(&out));
    let flowops: u64 = blocks[0].iter().filter(|(n, _)| n.starts_with("fsyncfile")).map(|r| r.1).sum();
    assert!(flowops > 0, "{:?}", blocks[0]);
    let text = std::fs::read_to_string(&summary).expect("strace's summary");
    assert_eq!(strace_calls(&text, "fsync"), flowops, "{text}");
    assert_eq!(strace_calls(&text, "syncfs") + strace_calls(&text, "sync"), 0, "{text}");
}

/// One thread's calls on the fileset's files, from strace's per-thread log: `(call, fd,
/// buffer address, size, result)` for write, lseek and read (raw, in hex), and the opens
/// and closes by name.
fn fileset_calls(log: &str) -> Vec<(String, u64, u64, u64, String)> {
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap_or(u64::MAX);
    log.lines()
        .filter_map(|l| {
            let (call, rest) = l.split_once('(')?;
            // strace pads the result: `read(0xc, 0x7f.., 0x1000)      = 0x1000`.
            let (args, result) = rest.rsplit_once(" = ")?;
            let args = args.trim_end().strip_suffix(')')?;
            let a: Vec<&str> = args.split(", ").collect();
            match call {
                "write" | "read" | "lseek" if a.len() == 3 => {
                    Some((call.to_string(), hex(a[0]), hex(a[1]), hex(a[2]), result.trim().to_string()))
                }
                "openat2" if l.contains("O_RDWR") && l.contains("/s/") => {
                    let fd = result.split('<').next().and_then(|n| n.trim().parse().ok())?;
                    Some(("open".into(), fd, 0, 0, String::new()))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn whole_file_flowops_make_filebenchs_calls_from_random_places_in_the_threads_memory() {
    // filebench's readwholefile is lseek(0) and read() until end of file; its writewholefile
    // writes from the descriptor's position in pieces whose next size is taken before the
    // step (a 10k file in 4k pieces: 4k, 4k, 4k); each I/O lands at a random multiple of its
    // size in the thread's memsize, 16 bytes past a page, as filebench's malloc'd memory
    // (flowoplib_iobufsetup). The kernel sees the calls: strace, one log per thread.
    let strace = crate::util::require("strace");
    let dir = Scratch::new("filebench-calls");
    let files = Scratch::new("filebench-calls-files");
    let f = files.path.join("calls.f");
    std::fs::write(
        &f,
        "define fileset name=s,path=/tmp,size=10k,entries=4,prealloc=100,dirwidth=10\n\
         define process name=p\n{\n  thread name=t,memsize=4m\n  {\n\
             flowop openfile name=o,filesetname=s,fd=1\n    flowop writewholefile name=w,fd=1,iosize=4k\n\
             flowop readwholefile name=r,fd=1,iosize=4k\n    flowop closefile name=c,fd=1\n\
             flowop finishoncount name=f,value=20,target=r\n  }\n}\nrun 30\n",
    )
    .expect("write");
    let prefix = files.path.join("trace");
    let out = std::process::Command::new(strace)
        .args(["-ff", "-qq", "-y", "-e", "trace=openat2,read,write,lseek", "-e", "raw=read,write,lseek", "-o"])
        .arg(&prefix)
        .arg(env!("CARGO_BIN_EXE_fsarena"))
        .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
        .args(["run", "--repeat", "1", "--warmup", "0", "--no-store", "--no-drop-caches", "--output-format", "json"])
        .args(["--target", &dir.spec(), "--workload", &format!("filebench:file={}", f.display())])
        .bounded_output()
        .expect("strace runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let counters = &json["run"]["results"][0]["counters"];
    for name in ["r", "w"] {
        assert_eq!(counters[format!("flowop.{name}.ops")][0], 20, "{counters}");
        assert_eq!(counters[format!("flowop.{name}.bytes")][0], 20 * 3 * 4096, "{name}: {counters}");
    }
    // The worker's log: the one thread that opens the fileset's files read-write.
    let worker = std::fs::read_dir(&files.path)
        .expect("logs")
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .find(|log| fileset_calls(log).iter().any(|c| c.0 == "open"))
        .expect("a thread that opened the fileset's files");
    let calls = fileset_calls(&worker);
    let mut passes = 0;
    let mut places = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < calls.len() {
        if calls[i].0 != "open" {
            i += 1;
            continue;
        }
        let fd = calls[i].1;
        let pass: Vec<_> = calls[i + 1..].iter().take_while(|c| c.0 != "open").filter(|c| c.1 == fd).collect();
        let shape: Vec<(&str, u64, &str)> = pass.iter().map(|c| (c.0.as_str(), c.3, c.4.as_str())).collect();
        assert_eq!(
            shape,
            [
                ("write", 0x1000, "0x1000"),
                ("write", 0x1000, "0x1000"),
                ("write", 0x1000, "0x1000"),
                ("lseek", 0, "0"),
                ("read", 0x1000, "0x1000"),
                ("read", 0x1000, "0x1000"),
                ("read", 0x1000, "0x1000"),
                ("read", 0x1000, "0"),
            ],
            "pass {passes}:\n{worker}"
        );
        for c in pass.iter().filter(|c| c.0 != "lseek") {
            assert_eq!(c.2 % 4096, 16, "a buffer not 16 bytes past a page: {c:?}");
            places.insert(c.2);
        }
        passes += 1;
        i += 1;
    }
    assert_eq!(passes, 20, "{worker}");
    // Two placements per pass (one per flowop), 40 in all, among the 1023 of 4 MiB: filebench
    // places each I/O afresh; a reused buffer would give one address.
    assert!(places.len() >= 30, "{} places: {places:?}", places.len());
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}
