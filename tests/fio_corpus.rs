//! The fio job-file corpus: every tests/fio_corpus/*.fio, written as fio's HOWTO describes
//! (size-based, small), runs under fio and under fsarena on the same tmpfs directory, and
//! both move the same bytes in the same number of I/Os, per job and direction (mixed jobs:
//! the totals, since each tool draws the read/write split at random), with the same number
//! of syncs. A file marked `; corpus: offsets` runs under strace in both tools, and their
//! reads and writes of the job's files come at the same offsets, in the same order, with
//! the same lengths. Files that do not match yet are listed in [`KNOWN_DIFFERENCES`] with the reason;
//! one that matches while listed fails the test too, so the table stays true.

use crate::util::Bounded;
use crate::util::{json, require, Scratch};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Corpus files (without `.fio`) that do not match fio yet, and why.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// One job's counts: [read bytes, read I/Os, write bytes, write I/Os, syncs].
pub type Counts = [u64; 5];

/// The corpus directory, next to this file.
fn corpus_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fio_corpus"))
}

/// Every job of a fio-shaped JSON: its name and counts.
pub fn jobs(v: &serde_json::Value) -> Vec<(String, Counts)> {
    let count = |j: &serde_json::Value, dir: &str, key: &str| j[dir][key].as_u64().unwrap_or(0);
    v["jobs"]
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .map(|j| {
                    // With its reporting group, which must be fio's too (new_group, stonewall).
                    let name = format!("{} (g={})", j["jobname"].as_str().unwrap_or("?"), j["groupid"]);
                    let c = [
                        count(j, "read", "io_bytes"),
                        count(j, "read", "total_ios"),
                        count(j, "write", "io_bytes"),
                        count(j, "write", "total_ios"),
                        count(j, "sync", "total_ios"),
                    ];
                    (name, c)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What a file says the harness should expect: both tools refuse it (`; corpus: both refuse`).
fn both_refuse(text: &str) -> bool {
    text.lines().any(|l| l.trim() == "; corpus: both refuse")
}

/// A job the file marks as stopped by another's exitall (`; corpus: stopped NAME`).
fn stopped(text: &str, job: &str) -> bool {
    // `job` as [`jobs`] names it: with its group.
    let job = job.split(" (g=").next().unwrap_or(job);
    text.lines().any(|l| l.trim().strip_prefix("; corpus: stopped ").is_some_and(|j| j.trim() == job))
}

/// Bytes a stopped job may move before it counts as not stopped (`; corpus: stopped-below BYTES`).
fn stopped_limit(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("; corpus: stopped-below ").and_then(|n| n.trim().parse().ok()))
        .unwrap_or(1 << 20)
}

/// What a file says the harness should compare besides counts: offsets (`; corpus: offsets`).
fn wants_offsets(text: &str) -> bool {
    text.lines().any(|l| l.trim() == "; corpus: offsets")
}

/// `cmd` run under strace when `trace` is given: every pread64 and pwrite64, with the path
/// of its file descriptor, written to `trace.TID`, one file per thread (so that no call is
/// split by another thread's).
fn traced(cmd: Command, trace: Option<&Path>) -> Command {
    match trace {
        None => cmd,
        Some(t) => {
            let mut c = Command::new(require("strace"));
            c.args(["-ff", "-qq", "-s", "0", "-y", "-e", "trace=pread64,pwrite64", "-e", "signal=none", "-o"])
                .arg(t)
                .arg(cmd.get_program())
                .args(cmd.get_args());
            c
        }
    }
}

/// One I/O seen by strace: 'r' or 'w', offset and length.
type Traced = (char, u64, u64);

/// The job's own I/Os in the strace logs `trace.TID`: those of the thread that did the most
/// reads and writes of job files (`NAME.N.M`, as both tools name them; fsarena reaches the
/// target through a mount of its own, so the directory differs), its last `n` (fio lays out
/// with write(2), fsarena with pwrite64 before the job).
fn traced_ios(trace: &Path, n: u64) -> Vec<Traced> {
    let (Some(parent), Some(prefix)) = (trace.parent(), trace.file_name().and_then(|f| f.to_str())) else {
        return Vec::new();
    };
    let prefix = format!("{prefix}.");
    let logs = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|f| f.starts_with(&prefix)));
    let all = logs.map(|e| thread_ios(&e.path())).max_by_key(Vec::len).unwrap_or_default();
    all[all.len().saturating_sub(n as usize)..].to_vec()
}

/// True for a job file's name as fio names it by default: `NAME.JOBNUM.FILENUM`.
fn job_file_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut parts = name.rsplitn(3, '.');
    let digits = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_some_and(|p| !p.is_empty())
}

/// Every read and write of job files in one thread's strace log.
fn thread_ios(log: &Path) -> Vec<Traced> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter(|l| l.split_once('<').and_then(|(_, rest)| rest.split_once('>')).is_some_and(|(p, _)| job_file_name(p)))
        .filter_map(|l| {
            let kind = if l.contains("pread64(") {
                'r'
            } else if l.contains("pwrite64(") {
                'w'
            } else {
                return None;
            };
            // `pread64(3</dir/f>, ..., LEN, OFFSET) = N`
            let args = &l[..l.rfind(')')?];
            let mut nums = args.rsplit(", ");
            let offset = nums.next()?.trim().parse().ok()?;
            let len = nums.next()?.trim().parse().ok()?;
            Some((kind, offset, len))
        })
        .collect()
}

/// The outcome of one tool on one file: its jobs, or why there are none.
type Outcome = Result<Vec<(String, Counts)>, String>;

fn fio(file: &Path, dir: &Scratch, cwd: &Scratch) -> Outcome {
    fio_traced(file, dir, cwd, None)
}

fn fio_traced(file: &Path, dir: &Scratch, cwd: &Scratch, trace: Option<&Path>) -> Outcome {
    let out = crate::util::fio_output(|| {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut c = traced(crate::util::reference_fio(&text), trace);
        c.arg(format!("--directory={}", dir.path.display()))
            .arg("--output-format=json")
            .arg(file)
            .current_dir(&cwd.path)
            .env("FSARENA_CORPUS_SIZE", "2m");
        c
    });
    // fio may print notes (`note: both iodepth >= 1 and synchronous I/O engine ...`) before
    // the JSON on stdout.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let start = stdout.find("\n{").map_or(0, |at| at + 1);
    let v: serde_json::Value = serde_json::from_str(&stdout[start..]).unwrap_or(serde_json::Value::Null);
    let failed = v["jobs"].as_array().is_some_and(|j| j.iter().any(|j| j["error"].as_u64().unwrap_or(0) != 0));
    if !out.status.success() || failed {
        return Err(format!("fio exit {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(jobs(&v))
}

fn fsarena(file: &Path, dir: &Scratch, cwd: &Scratch) -> Outcome {
    fsarena_traced(file, dir, cwd, None)
}

fn fsarena_traced(file: &Path, dir: &Scratch, cwd: &Scratch, trace: Option<&Path>) -> Outcome {
    let workdir = cwd.path.join("work");
    let out = traced(Command::new(env!("CARGO_BIN_EXE_fsarena")), trace)
        .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
        .args(["run", "--target", &dir.spec(), "--fio"])
        .arg(file)
        .args(["--output-format", "fio-json", "--no-store", "--repeat", "1", "--warmup", "0", "--workdir"])
        .arg(&workdir)
        .current_dir(&cwd.path)
        .env("FSARENA_CORPUS_SIZE", "2m")
        .bounded_output()
        .expect("fsarena runs");
    if !out.status.success() {
        return Err(format!("fsarena exit {:?}: {}", out.status.code(), crate::util::stderr(&out).trim()));
    }
    Ok(jobs(&json(&out)))
}

/// The I/Os of an outcome, every job and direction.
fn ios(o: &Outcome) -> u64 {
    o.as_ref().map_or(0, |jobs| jobs.iter().map(|(_, c)| c[1] + c[3]).sum())
}

/// Where two traced I/O sequences part.
fn first_difference(fio: &[Traced], ours: &[Traced]) -> String {
    let at = fio.iter().zip(ours).position(|(a, b)| a != b).unwrap_or(fio.len().min(ours.len()));
    format!(
        "offsets part at I/O {at} of {} (fio) / {} (fsarena): fio {:?}, fsarena {:?}",
        fio.len(),
        ours.len(),
        &fio[at.min(fio.len())..(at + 4).min(fio.len())],
        &ours[at.min(ours.len())..(at + 4).min(ours.len())]
    )
}

/// Compares one file's outcomes; None when they agree.
fn compare(fio: &Outcome, ours: &Outcome, text: &str) -> Option<String> {
    let refuse = both_refuse(text);
    let (fio, ours) = match (fio, ours) {
        (Err(_), Err(e)) if refuse && e.contains("exit Some(2)") => return None,
        (_, _) if refuse => return Some(format!("expected both to refuse: fio {fio:?}, fsarena {ours:?}")),
        (Err(e), _) => return Some(format!("fio failed: {e}")),
        (_, Err(e)) => return Some(e.clone()),
        (Ok(f), Ok(o)) => (f, o),
    };
    if fio.len() != ours.len() {
        return Some(format!("{} jobs in fio's report, {} in fsarena's", fio.len(), ours.len()));
    }
    for ((fname, f), (oname, o)) in fio.iter().zip(ours) {
        if fname != oname {
            return Some(format!("job '{fname}' in fio is '{oname}' in fsarena"));
        }
        // A job stopped by another's exitall moves what timing allows: both tools must have
        // stopped it well before its end.
        if stopped(text, fname) {
            let (fb, ob) = (f[0] + f[2], o[0] + o[2]);
            // Nothing at all is fine: the other job may end before this one's first I/O. fio
            // itself lets the job run whole when the exitall job ended before it started (seen
            // under load): then only fsarena's side is held.
            if ob > stopped_limit(text) {
                return Some(format!("job '{fname}' was to be stopped early: fio moved {fb} bytes, fsarena {ob}"));
            }
            continue;
        }
        // Every draw (sizes, mix, offsets, file sizes) follows fio's generators: even mixed
        // jobs match per direction.
        let same = f == o;
        if !same {
            return Some(format!("job '{fname}' [rbytes, rios, wbytes, wios, syncs]: fio {f:?}, fsarena {o:?}"));
        }
    }
    None
}

#[test]
fn corpus_matches_fio() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/fio_corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 60, "the corpus holds {} job files: expected 60 or more", files.len());
    let stem = |p: &Path| p.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
    for (known, _) in KNOWN_DIFFERENCES {
        assert!(
            files.iter().any(|f| stem(f) == *known),
            "KNOWN_DIFFERENCES names {known}.fio, which is not in the corpus"
        );
    }
    let mut wrong = Vec::new();
    let mut fixed = Vec::new();
    for file in &files {
        let name = stem(file);
        let text = std::fs::read_to_string(file).expect("corpus file");
        let dir = Scratch::new(&format!("corpus-{name}"));
        let (fio_cwd, our_cwd) =
            (Scratch::new(&format!("corpus-{name}-fio")), Scratch::new(&format!("corpus-{name}-ours")));
        let offsets = wants_offsets(&text);
        let (fio_trace, our_trace) = (fio_cwd.path.join("strace.log"), our_cwd.path.join("strace.log"));
        let theirs = fio_traced(file, &dir, &fio_cwd, offsets.then_some(fio_trace.as_path()));
        let fio_ios = traced_ios(&fio_trace, ios(&theirs));
        // Each tool on a fresh directory: neither finds the other's files laid out.
        std::fs::remove_dir_all(&dir.path).and_then(|()| std::fs::create_dir_all(&dir.path)).expect("fresh dir");
        let ours = fsarena_traced(file, &dir, &our_cwd, offsets.then_some(our_trace.as_path()));
        let our_ios = traced_ios(&our_trace, ios(&ours));
        let known = KNOWN_DIFFERENCES.iter().any(|(k, _)| *k == name);
        let differs = compare(&theirs, &ours, &text).or_else(|| {
            (offsets && (fio_ios.is_empty() || fio_ios != our_ios)).then(|| first_difference(&fio_ios, &our_ios))
        });
        match (differs, known) {
            (Some(why), false) => wrong.push(format!("{name}.fio: {why}")),
            (None, true) => fixed.push(format!("{name}.fio")),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "corpus files that differ from fio:\n{}", wrong.join("\n"));
    assert!(fixed.is_empty(), "these now match fio: remove them from KNOWN_DIFFERENCES: {}", fixed.join(", "));
}

/// The one file a run left in `dir` (fsarena keeps its files in a subdirectory of its own).
fn only_file(dir: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                found.push(e.path());
            }
        }
    }
    assert_eq!(found.len(), 1, "expected one file in {}: {found:?}", dir.display());
    found.remove(0)
}

#[test]
fn buffer_pattern_writes_the_bytes_fio_writes() {
    let src = Scratch::new("corpus-pattern-src");
    let job = src.path.join("pattern.fio");
    std::fs::write(&job, "[pat]\nrw=randwrite\nsize=256k\nbuffer_pattern=0xdeadbeef\nkeep=1\n").expect("job");
    let fio_job = src.path.join("pattern-fio.fio");
    std::fs::write(&fio_job, "[pat]\nrw=randwrite\nsize=256k\nbuffer_pattern=0xdeadbeef\n").expect("job");
    let (theirs, ours, cwd) =
        (Scratch::new("corpus-pattern-fio"), Scratch::new("corpus-pattern-ours"), Scratch::new("corpus-pattern-cwd"));
    fio(&fio_job, &theirs, &cwd).expect("fio runs the pattern job");
    fsarena(&job, &ours, &cwd).expect("fsarena runs the pattern job");
    let (a, b) = (
        std::fs::read(only_file(&theirs.path)).expect("fio's file"),
        std::fs::read(only_file(&ours.path)).expect("ours"),
    );
    assert_eq!(a.len(), 256 << 10);
    assert!(a == b, "fsarena's file differs from fio's");
    assert!(b.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]));
}

#[test]
fn startdelay_delays_the_job_and_not_its_runtime() {
    let src = Scratch::new("corpus-delay-src");
    let job = src.path.join("delay.fio");
    std::fs::write(&job, "[late]\nrw=read\nsize=1m\nstartdelay=2\n").expect("job");
    let (dir, cwd) = (Scratch::new("corpus-delay"), Scratch::new("corpus-delay-cwd"));
    let t = std::time::Instant::now();
    let out = crate::util::fsarena()
        .args(["run", "--target", &dir.spec(), "--fio"])
        .arg(&job)
        .args(["--output-format", "fio-json", "--no-store", "--repeat", "1", "--warmup", "0", "--workdir"])
        .arg(cwd.path.join("work"))
        .bounded_output()
        .expect("fsarena runs");
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    assert!(t.elapsed() >= std::time::Duration::from_secs(2), "took {:?}", t.elapsed());
    let v = json(&out);
    assert!(v["jobs"][0]["read"]["runtime"].as_u64().expect("runtime") < 1500, "{}", v["jobs"][0]["read"]);
}

/// The percentile keys of a job's read `clat_ns` and `lat_ns` in a fio-shaped JSON.
fn percentile_keys(v: &serde_json::Value) -> [Vec<String>; 2] {
    ["clat_ns", "lat_ns"].map(|lat| {
        let p = &v["jobs"][0]["read"][lat]["percentile"];
        p.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
    })
}

#[test]
fn percentile_options_shape_the_json_as_fios() {
    let src = Scratch::new("corpus-pct-src");
    for (i, text) in [
        "[global]\npercentile_list=25:75:99.99\n[p]\nrw=randread\nsize=256k\n",
        "[p]\nrw=read\nsize=256k\nclat_percentiles=0\n",
        "[p]\nrw=read\nsize=256k\nlat_percentiles=1\npercentile_list=10:50\n",
    ]
    .iter()
    .enumerate()
    {
        let job = src.path.join(format!("p{i}.fio"));
        std::fs::write(&job, text).expect("job");
        let (dir, cwd) = (Scratch::new(&format!("corpus-pct-{i}")), Scratch::new(&format!("corpus-pct-{i}-cwd")));
        let theirs = crate::util::fio_output(|| {
            let mut c = Command::new(require("fio"));
            c.current_dir(&cwd.path)
                .arg(format!("--directory={}", dir.path.display()))
                .arg("--output-format=json")
                .arg(&job);
            c
        });
        let theirs: serde_json::Value = serde_json::from_slice(&theirs.stdout).expect("fio's JSON");
        std::fs::remove_dir_all(&dir.path).and_then(|()| std::fs::create_dir_all(&dir.path)).expect("fresh dir");
        let ours = crate::util::fsarena()
            .args(["run", "--target", &dir.spec(), "--fio"])
            .arg(&job)
            .args(["--output-format", "fio-json", "--no-store", "--repeat", "1", "--warmup", "0", "--workdir"])
            .arg(cwd.path.join("work"))
            .bounded_output()
            .expect("fsarena runs");
        assert_eq!(percentile_keys(&json(&ours)), percentile_keys(&theirs), "{text}");
    }
}

/// exit_what=stonewall stops the jobs already running, as fio's `fio_terminate_threads`
/// (TERMINATE_STONEWALL: runstate running or later): a job still in its start delay, or
/// waiting for another with `wait_for`, starts later and runs in full; the next stonewalled
/// stage runs. Checked against fio's source, not its run: fio 3.33 hangs on this file (with
/// processes and with threads; measured, and killed after 60 s), where without the exitall
/// every job ends in 4 s.
#[test]
fn exit_what_stonewall_spares_the_jobs_not_yet_started() {
    let src = Scratch::new("corpus-exitwhat-src");
    for threads in ["thread=1\n", ""] {
        let text = format!(
            "[global]\n{threads}[short]\nrw=read\nsize=1m\nexitall\nexit_what=stonewall\n\
             [long]\nrw=read\nsize=16m\nrate=4m\n[delayed]\nrw=read\nsize=1m\nstartdelay=1\n\
             [waiter]\nrw=read\nsize=1m\nwait_for=long\n[later]\nstonewall\nrw=read\nsize=1m\n"
        );
        let job = src.path.join("exitwhat.fio");
        std::fs::write(&job, &text).expect("job");
        let (dir, cwd) = (Scratch::new("corpus-exitwhat"), Scratch::new("corpus-exitwhat-cwd"));
        let ours = fsarena_traced(&job, &dir, &cwd, None).unwrap_or_else(|e| panic!("{text}: {e}"));
        // Named with their reporting group: `short (g=0)`.
        let read = |name: &str| ours.iter().find(|(n, _)| n.split(" (").next() == Some(name)).map(|(_, c)| c[0]);
        assert_eq!(read("short"), Some(1 << 20), "{text}: {ours:?}");
        assert!(read("long").is_some_and(|b| b < 4 << 20), "the running job stops: {text}: {ours:?}");
        for spared in ["delayed", "waiter", "later"] {
            assert_eq!(read(spared), Some(1 << 20), "{spared} runs in full: {text}: {ours:?}");
        }
    }
}
