//! Bad input: exit 2, one clear line naming the value and what is accepted, nothing created.

use crate::util::{run, stderr, stdout, Scratch};

fn refused(args: &[&str], dir: &Scratch, want: &str) {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2; stderr: {err}");
    assert!(err.contains(want), "{args:?}: stderr lacks '{want}': {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line expected: {err}");
    assert!(dir.leftovers().is_empty(), "{args:?} created {:?}", dir.leftovers());
}

#[test]
fn bad_workload_values_exit_2_before_anything_is_created() {
    let dir = Scratch::new("bad-input");
    let t = dir.spec();
    let cases = [
        ("io:rw=sideways,size=1m", "'sideways' is not an access pattern"),
        ("io:bs=0,size=1m", "bs=0"),
        ("io:bs=4x,size=1m", "'4x' is not a size"),
        ("io:bs=2m,size=1m", "larger than"),
        ("io:numjobs=0,size=1m", "numjobs=0"),
        ("io:colour=red,size=1m", "unknown io option 'colour'"),
        ("io:numjob=4,size=1m", "unknown io option 'numjob': did you mean 'numjobs'?"),
        ("meta:item=10", "unknown meta option 'item': did you mean 'items'?"),
        ("io:rw=read", "no size"),
        ("io:ioengine=splice,size=1m", "ioengine=splice is fio's but not supported by fsarena"),
        ("io:ioengine=io_uring,hipri=1,size=1m", "hipri=1 needs direct=1"),
        ("crash:x=1", "unknown crash option 'x'"),
        ("verify:x=1", "unknown verify option 'x'"),
        ("verify:mode=concurrent,numops=5", "numops= is not an option of mode=concurrent: it is one of mode=fsx"),
        ("verify:numjobs=2", "numjobs= is not an option of mode=fsx: it is one of mode=concurrent"),
        ("verify:mode=concurrent,ioengine=splice", "ioengine=splice is fio's but not supported by fsarena"),
        ("verify:mode=concurrent,size=6k", "not a multiple of 4k"),
        ("io:rw=write,size=1m,verify_only=1", "verify_only needs verify="),
        ("kv:x=1", "unknown kv option 'x'"),
        ("meta:n=10", "unknown meta option 'n'"),
        ("io:cmd='unbalanced", "unbalanced single quote"),
    ];
    for (workload, want) in cases {
        refused(&["run", "--target", &t, "--workload", workload], &dir, want);
    }
}

#[test]
fn every_problem_of_a_job_file_is_said_at_once() {
    let dir = Scratch::new("bad-input-all-problems");
    let job = dir.path.join("../fsarena-test-all-problems.fio");
    std::fs::write(
        &job,
        "[global]\nsize=1m ; inline comments are fine\n[a]\nbs=4q\nzonemode=zbd\n[b\n[c]\nrw=randread:0\n[d]\nnumjobs=0\n",
    )
    .unwrap();
    let out = run(&["run", "--target", &dir.spec(), "--fio", job.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.trim().lines().collect();
    let name = job.display().to_string();
    let want = [
        format!("fsarena: {name}:4: bs=4q"),
        format!("fsarena: {name}:5: fio option 'zonemode'"),
        format!("fsarena: {name}:6: this line is neither"),
        format!("fsarena: {name}:8: rw=randread:0"),
        format!("fsarena: {name}:9 (job 'd'): numjobs=0"),
        format!("fsarena: {name}: 5 problems in this job file"),
    ];
    assert_eq!(lines.len(), want.len(), "{err}");
    for (line, want) in lines.iter().zip(&want) {
        assert!(line.starts_with(want.as_str()), "'{line}' does not start with '{want}'");
    }
    assert!(dir.leftovers().is_empty());
    std::fs::remove_file(&job).unwrap();
}

#[test]
fn bad_targets_formats_and_files_exit_2() {
    let dir = Scratch::new("bad-input2");
    let t = dir.spec();
    let w = "io:size=1m";
    refused(&["run", "--target", "dir:path=/nonexistent/x", "--workload", w], &dir, "not an existing directory");
    refused(&["run", "--target", "zfs", "--workload", w], &dir, "unknown target kind 'zfs'");
    refused(&["run", "--target", "ext4:colour=red", "--workload", w], &dir, "unknown key 'colour' for target ext4");
    refused(&["run", "--target", "ext4:size=4q", "--workload", w], &dir, "size=4q");
    refused(&["run", "--target", "xfs:size=900t", "--workload", w], &dir, "does not fit");
    refused(&["run", "--target", "device:path=/dev/null,fs=ext4", "--workload", w], &dir, "--force");
    refused(&["run", "--target", "fuse:cmd='true'", "--workload", w], &dir, "has no {mnt}");
    refused(&["run", "--target", &format!("{t},color=red"), "--workload", w], &dir, "unknown key 'color'");
    refused(&["run", "--target", &t, "--workload", w, "--output-format", "xml"], &dir, "unknown output format 'xml'");
    refused(&["run", "--target", &t, "--fio", "/nonexistent.fio"], &dir, "cannot read fio job file");
    refused(&["run", "--workload", w], &dir, "no target");
    let job = dir.path.join("../fsarena-test-bad.fio");
    std::fs::write(&job, "[global]\nsize=1m\n[j]\nrw=randread\nzonemode=zbd\n").unwrap();
    refused(
        &["run", "--target", &t, "--fio", job.to_str().unwrap()],
        &dir,
        "fsarena-test-bad.fio:5: fio option 'zonemode' is not supported",
    );
    std::fs::write(&job, "[j]\nsize=1m\nbs=4k\nbs=1q\n").unwrap();
    refused(&["run", "--target", &t, "--fio", job.to_str().unwrap()], &dir, ":4: bs=1q");
    std::fs::remove_file(&job).unwrap();
    let toml = dir.path.join("../fsarena-test-bad.toml");
    std::fs::write(
        &toml,
        "targets = [\"dir:path=/dev/shm\"]\n[[workload]]\nkind = \"io\"\nrw = \"randread\"\nsize = \"1m\"\nbs = 0\n",
    )
    .unwrap();
    refused(&["run", toml.to_str().unwrap()], &dir, "[[workload]] #1: bs=0");
    std::fs::write(&toml, "targets = [\n").unwrap();
    refused(&["run", toml.to_str().unwrap()], &dir, "not a valid job file");
    std::fs::remove_file(&toml).unwrap();
}

#[test]
fn dry_run_prints_the_plan_and_creates_nothing() {
    let dir = Scratch::new("dry-run");
    let out =
        run(&["run", "--target", &dir.spec(), "--workload", "io:rw=randread,bs=4k,size=64m,numjobs=2", "--dry-run"]);
    assert!(out.status.success());
    let text = crate::util::stdout(&out);
    // In fio's words: its start-of-job line, then every option that decides what moves.
    assert!(text.contains("io: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B"), "{text}");
    for want in ["numjobs=2", "size=67108864", "nrfiles=1", "sync=0", "direct=0", "time_based=0"] {
        assert!(text.contains(want), "no {want}: {text}");
    }
    assert!(!text.contains("RandRead") && !text.contains("Psync"), "Rust debug names: {text}");
    assert!(dir.leftovers().is_empty());
}

#[test]
fn help_man_page_and_completions_come_from_the_one_flag_table() {
    let help = stdout(&run(&["run", "--help"]));
    for flag in [
        "--target",
        "--workload",
        "--fio",
        "--repeat",
        "--warmup",
        "--db",
        "--no-store",
        "--workdir",
        "--output-format",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    let man = stdout(&run(&["man"]));
    assert!(man.contains(".TH fsarena 1") && man.contains("side by side"), "{man}");
    let bash = stdout(&run(&["completions", "bash"]));
    assert!(bash.contains("--target") && bash.contains("--fail-on-regression"), "completions cover every subcommand");
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "an unknown shell is bad input");
}

/// Names that would put files outside the target, and bombs: exit 2 before anything exists.
#[test]
fn hostile_names_and_bombs_exit_2_before_anything_is_created() {
    let dir = Scratch::new("bad-input-hostile");
    let t = dir.spec();
    let long = format!("io:name={},size=1m", "a".repeat(300));
    let cases: Vec<(&str, &str)> = vec![
        ("io:name=/some/dir/victim,size=1m", "name: '/some/dir/victim' is not a plain name"),
        ("io:name=../victim,size=1m", "it holds '/'"),
        ("io:name=..,size=1m", "not a plain name"),
        ("io:name=.,size=1m", "not a plain name"),
        ("io:name=a\u{1b}]0;x\u{7}b,size=1m", "control character"),
        (&long, "longer than 200 bytes"),
        ("io:filename=/etc/passwd,size=1m", "filename: '/etc/passwd' is not a plain name"),
        ("io:filename=../../x,size=1m", "filename: '../../x'"),
        ("io:numjobs=100000,size=1m,thread=1", "needs 100000 threads at once, more than the"),
        ("io:numjobs=5000,size=64k,thread=1", "5000 threads"),
        // As processes, fio's own limit of 4096 jobs comes first.
        ("io:numjobs=100000,size=1m", "in 100000 clones of 1 jobs: at most 4096 clones (fio's limit of jobs)"),
        ("io:numjobs=5000,size=64k", "5000 clones"),
        (
            "io:nrfiles=4000000000,filesize=4k",
            "io job 'io' (numjobs=1, nrfiles=4000000000): keeps 4000000000 files open",
        ),
        ("io:numjobs=500,bs=1g,size=1g", "of memory for its buffers"),
        ("io:size=100t", "of files on the target, more than the"),
        ("io:numjobs=64,size=1t", "of files on the target"),
        ("meta:branch=2,depth=22,items_per_dir=1,tasks=4000,unique_dir=1", "of memory"),
        ("meta:items=1000,write_bytes=1t", "of memory"),
        ("meta:items=1000000,write_bytes=1m", "of files on the target"),
        ("tree:levels=5000,dirs_per_level=1,files_per_dir=1", "PATH_MAX"),
        ("tree:file_size=100t,threads=1,levels=1,dirs_per_level=1,files_per_dir=1", "of files on the target"),
    ];
    for (workload, want) in &cases {
        refused(&["run", "--target", &t, "--workload", workload], &dir, want);
    }
    // The bound holds for --dry-run too, and answers at once.
    let started = std::time::Instant::now();
    refused(
        &["run", "--target", &t, "--workload", "io:numjobs=100000,size=1m,thread=1", "--dry-run"],
        &dir,
        "100000 threads",
    );
    refused(&["run", "--target", &t, "--workload", "io:numjobs=100000,size=1m", "--dry-run"], &dir, "100000 clones");
    assert!(started.elapsed().as_secs() < 10, "took {:?}", started.elapsed());
}

/// Job files that are not files, too large, bombs, or not job files: exit 2, nothing echoed.
#[test]
fn hostile_job_files_exit_2_without_echoing_them() {
    let dir = Scratch::new("bad-input-jobfiles");
    let jobs = Scratch::new("bad-input-jobfiles-src");
    let t = dir.spec();
    let at = |name: &str| jobs.path.join(name).display().to_string();
    let write = |name: &str, body: &[u8]| std::fs::write(jobs.path.join(name), body).unwrap();
    let fifo = at("fifo.fio");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    write("big.fio", "; padding\n".repeat(210_000).as_bytes());
    write("big.toml", "# padding\n".repeat(210_000).as_bytes());
    for i in 0..6 {
        let body =
            if i == 5 { "[global]\nsize=1m\n".to_string() } else { format!("include f{}.fio\n", i + 1).repeat(10) };
        write(&format!("f{i}.fio"), body.as_bytes());
    }
    write("loop.fio", b"include loop.fio\n");
    let secret = "root:$6$Zm9vYmFyc2VjcmV0$aGFzaGhhc2hoYXNo:19000:0:99999:7:::";
    write("shadow", format!("{secret}\n").as_bytes());
    write("inc-shadow.fio", b"[j]\nsize=1m\ninclude shadow\n");
    write("empty.fio", b"\n");
    write("inc-empty.fio", b"include empty.fio\n[j]\nsize=1m\n");
    write("inc-none.fio", b"[j]\nsize=1m\ninclude\n");
    write("victim.fio", b"[global]\nsize=1m\n[/some/dir/victim]\nrw=write\n");
    write("dotdot.fio", b"[..]\nsize=1m\n");
    write("file.fio", b"[j]\nsize=1m\nfilename=../outside\n");
    write("binary.fio", b"[j]\nsize=1m\n\xff\xfe\x00secret\n");
    write("bom-bad.fio", "\u{feff}[j]\nsize=1m\nbs=4q\n".as_bytes());
    write("long.fio", format!("[j]\nsize=1m\nbs={}\n", "9".repeat(100_000)).as_bytes());
    write("quote.fio", b"[j]\nsize=1m\ndirectory=/tmp/x',label=y\n");
    write("toml-name.toml", b"[[workload]]\nkind = \"io\"\nname = \"../../victim\"\nsize = \"1m\"\n");
    let cases: Vec<(Vec<String>, String)> = vec![
        (vec!["--fio".into(), "/dev/zero".into()], "/dev/zero is a character device".into()),
        (vec!["--fio".into(), fifo.clone()], "is a FIFO".into()),
        (vec!["--fio".into(), jobs.path.display().to_string()], "is a directory".into()),
        (vec!["--fio".into(), at("big.fio")], "larger than the 1 MiB".into()),
        (vec![at("big.toml")], "larger than the 1 MiB".into()),
        (vec!["/dev/zero".into()], "/dev/zero is a character device".into()),
        (vec!["--fio".into(), at("f0.fio")], "more than 64 include directives".into()),
        (vec!["--fio".into(), at("loop.fio")], "nested too deeply".into()),
        (vec!["--fio".into(), at("inc-shadow.fio")], "shadow:1: this line is neither a [section] header".into()),
        (vec!["--fio".into(), at("inc-empty.fio")], "empty.fio is empty".into()),
        (vec!["--fio".into(), at("inc-none.fio")], "inc-none.fio:3: include without a file name".into()),
        (
            vec!["--fio".into(), at("victim.fio")],
            "victim.fio:3: section name '/some/dir/victim' is not a plain name".into(),
        ),
        (vec!["--fio".into(), at("dotdot.fio")], "section name '..' is not a plain name".into()),
        (vec!["--fio".into(), at("file.fio")], "filename: '../outside' is not a plain name".into()),
        (vec!["--fio".into(), at("binary.fio")], "binary.fio:3 is not UTF-8 text".into()),
        (vec!["--fio".into(), at("bom-bad.fio")], "bom-bad.fio:3: bs=4q".into()),
        (vec!["--fio".into(), at("long.fio")], "long.fio:3: bs=9999".into()),
        (vec![at("toml-name.toml")], "name: '../../victim' is not a plain name".into()),
    ];
    for (args, want) in &cases {
        let mut all: Vec<&str> = vec!["run", "--target", &t];
        all.extend(args.iter().map(String::as_str));
        refused(&all, &dir, want);
        let err = stderr(&run(&all));
        assert!(!err.contains("Zm9v") && !err.contains("secret") && err.len() < 600, "{args:?} echoes: {err}");
    }
    // directory= becomes a dir: target only when no --target is given: quoted, or refused.
    let out = run(&["run", "--fio", &at("quote.fio")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("without single quotes"), "{}", stderr(&out));
    // A byte-order mark is skipped: the file runs.
    write("bom.fio", "\u{feff}[global]\nsize=1m\n[j]\nrw=read\n".as_bytes());
    let out = run(&["run", "--target", &t, "--fio", &at("bom.fio"), "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A build without the `mpi` feature answers `--mpi` with exit 2 and how to get one.
#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_without_the_feature_says_how_to_build_it() {
    let dir = Scratch::new("mpi-plain");
    let out = run(&["run", "--mpi", "--target", &dir.spec(), "--workload", "io:rw=write,size=1m", "--no-store"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    for needed in ["--features mpi", "libopenmpi-dev", "libclang-dev"] {
        assert!(stderr(&out).contains(needed), "{}", stderr(&out));
    }
    assert!(dir.leftovers().is_empty());
    // Under mpirun every rank finds it: only rank 0 says it.
    use crate::util::Bounded;
    let quiet = crate::util::fsarena()
        .args(["run", "--mpi", "--target", &dir.spec(), "--workload", "io:rw=write,size=1m", "--no-store"])
        .env("OMPI_COMM_WORLD_RANK", "1")
        .bounded_output()
        .unwrap();
    assert_eq!(quiet.status.code(), Some(2));
    assert_eq!(stderr(&quiet), "");
}

/// Regression: `suite run NAME -o missing/x.html` (or `-o x.pdf`) ran the whole suite and
/// exited 0 without a report. Every `-o` of `run` and `suite run` is checked with the rule that
/// writes the report, before the work directory, the store or a target exists.
#[test]
fn an_output_path_that_cannot_be_written_exits_2_before_anything_runs() {
    let dir = Scratch::new("bad-output");
    let target = Scratch::new("bad-output-target");
    std::fs::create_dir(dir.path.join("taken.html")).unwrap();
    let ro = crate::util::SmallTmpfs::mount("bad-output-ro", "tmpfs", "ro,size=1m");
    let d = dir.path.display().to_string();
    let (work, db) = (format!("{d}/work"), format!("{d}/results.db"));
    let cases = [
        (
            format!("{d}/missing/report.html"),
            format!("-o {d}/missing/report.html: the directory {d}/missing does not exist"),
        ),
        (format!("{d}/report.pdf"), format!("-o {d}/report.pdf: expected a file ending in .html or .md")),
        (
            format!("{d}/taken.html"),
            format!("-o {d}/taken.html: is a directory; expected a file ending in .html or .md"),
        ),
        (
            format!("{}/report.md", ro.dir.path.display()),
            format!("cannot write in the directory {} (Read-only file system", ro.dir.path.display()),
        ),
    ];
    for (out, want) in &cases {
        let started = std::time::Instant::now();
        for args in [
            vec!["suite", "run", "trading", "--scale", "smoke", "--workdir", &work, "--db", &db, "-o", out],
            vec![
                "run",
                "--target",
                &target.spec(),
                "--workload",
                "io:size=1m",
                "--workdir",
                &work,
                "--db",
                &db,
                "-o",
                out,
            ],
        ] {
            let result = run(&args);
            let err = stderr(&result);
            assert_eq!(result.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(want.as_str()), "{args:?}: stderr lacks '{want}': {err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line expected: {err}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "refused at parse time, not after a run");
        assert_eq!(dir.leftovers(), [dir.path.join("taken.html")], "nothing created for -o {out}");
        assert!(target.leftovers().is_empty(), "the target untouched for -o {out}");
    }
    // The same check accepts what it should: a new .md in a writable directory plans.
    let out = run(&[
        "suite",
        "run",
        "trading",
        "--scale",
        "smoke",
        "--dry-run",
        "--workdir",
        &work,
        "-o",
        &format!("{d}/r.md"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dir.path.join("r.md").exists(), "a dry run writes no report");
}
