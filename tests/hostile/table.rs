//! The bad-input table runner. A row is one hostile command line and the text its one line of
//! stderr must hold; every row runs in a fresh case directory (a 16 MiB, 4096-inode tmpfs as
//! the `dir:` target, victims beside it, a work directory and database path that must never
//! appear) and must exit 2 with one clear line, print nothing on stdout, and change nothing.
//! All rows run (a few at a time) and every failing one is reported, not just the first.
//!
//! Placeholders in arguments and expected text: `{T}` the case's target directory, `{W}` its
//! work directory (absent), `{DB}` its database path (absent), `{S}` the case directory, `{F}`
//! the class's fixture directory (job files, odd work directories, databases).

use super::harness::{mount_points_under, play, quote, snapshot, speech_problems, Arena};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// One bad input: the arguments after `fsarena` and the substrings stderr must hold.
#[derive(Debug, Clone)]
pub struct Row {
    /// Arguments, with placeholders.
    pub args: Vec<String>,
    /// Every one must appear in stderr (after placeholders are filled in).
    pub wants: Vec<String>,
}

/// A row from arguments and expected substrings.
pub fn row(args: &[&str], wants: &[&str]) -> Row {
    Row { args: args.iter().map(|s| s.to_string()).collect(), wants: wants.iter().map(|s| s.to_string()).collect() }
}

/// `run --target dir:path={T} --workload WORKLOAD`.
pub fn wl(workload: &str, wants: &[&str]) -> Row {
    row(&["run", "--target", "dir:path={T}", "--workload", workload], wants)
}

/// `run --target TARGET --workload io:size=1m`.
pub fn tg(target: &str, wants: &[&str]) -> Row {
    row(&["run", "--target", target, "--workload", "io:size=1m"], wants)
}

/// `run --target dir:path={T} --fio FILE`.
pub fn fio(file: &str, wants: &[&str]) -> Row {
    row(&["run", "--target", "dir:path={T}", "--fio", file], wants)
}

/// `run FILE` (a TOML job file) with `--target dir:path={T}`.
pub fn toml(file: &str, wants: &[&str]) -> Row {
    row(&["run", file, "--target", "dir:path={T}"], wants)
}

/// Time a refusal may take; far more than a refusal needs, far less than a bomb.
const LIMIT: Duration = Duration::from_secs(10);

/// Plays every row of `class` with `workers` at a time and fails listing every row that was
/// not refused properly.
pub fn refuse_all(class: &str, fixtures: &Arena, rows: Vec<Row>, workers: usize) {
    let rows = only(rows, |r| r.args.join(" "));
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(r) = rows.get(i) else { break };
                let began = std::time::Instant::now();
                let mut problems = play_row(class, i, r, fixtures);
                // A refusal is quick (under a second here, release build): this guards against
                // one that hangs or does the work it refuses, not a speed test — the machine is
                // shared and debug builds under load take several seconds for the largest bombs.
                if began.elapsed() > Duration::from_secs(30) {
                    problems.push(format!("took {:.1}s", began.elapsed().as_secs_f64()));
                }
                if !problems.is_empty() {
                    failures.lock().unwrap().push((i, r.args.clone(), problems));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|f| f.0);
    eprintln!("hostile {class}: {} of {} bad inputs refused properly", rows.len() - failures.len(), rows.len());
    if !failures.is_empty() {
        let list: Vec<String> = failures
            .iter()
            .map(|(i, args, p)| format!("  #{i} {}\n      {}", quote(&args.join(" ")), p.join("\n      ")))
            .collect();
        panic!(
            "{} of {} {class} bad inputs were not refused properly:\n{}",
            failures.len(),
            rows.len(),
            list.join("\n")
        );
    }
}

fn play_row(class: &str, i: usize, r: &Row, fixtures: &Arena) -> Vec<String> {
    let case = Arena::new(&format!("{class}-{i}"));
    // Few inodes too: a file-count bomb fsarena accepts fails fast instead of filling memory.
    let target = case.tmpfs_with("target", "size=16m,nr_inodes=4096");
    case.file("victim/io.0.0", "victim: io.0.0\n");
    case.file("victim/x.0.0", "victim: x.0.0\n");
    case.file("victim/x", "victim: x\n");
    case.file("victim/d/precious", "victim: precious\n");
    case.dir("cwd");
    let work = case.workdir("work");
    let db = case.path("results.db");
    let fill = |s: &str| {
        s.replace("{T}", &target.display().to_string())
            .replace("{W}", &work.display().to_string())
            .replace("{DB}", &db.display().to_string())
            .replace("{S}", &case.root.display().to_string())
            .replace("{F}", &fixtures.root.display().to_string())
    };
    let mut args: Vec<String> = r.args.iter().map(|a| fill(a)).collect();
    let has = |args: &[String], flag: &str| args.iter().any(|a| a == flag);
    match args.first().map(String::as_str) {
        Some("run") => {
            if !has(&args, "--workdir") {
                args.extend(["--workdir".into(), fill("{W}")]);
            }
            if !has(&args, "--db") && !has(&args, "--no-store") {
                args.extend(["--db".into(), fill("{DB}")]);
            }
            // A row that sets either says what it means for both (a job file's value stands).
            if !has(&args, "--repeat") && !has(&args, "--warmup") {
                args.extend(["--repeat", "1", "--warmup", "0"].map(String::from));
            }
        }
        Some("demo") => {
            if !has(&args, "--workdir") {
                args.extend(["--workdir".into(), fill("{W}")]);
            }
            if !has(&args, "--db") {
                args.extend(["--db".into(), fill("{DB}")]);
            }
            args.extend(["-o".into(), fill("{S}/demo.html")]);
        }
        Some("cleanup") if !has(&args, "--workdir") => args.extend(["--workdir".into(), fill("{W}")]),
        Some("results" | "compare" | "report") if !has(&args, "--db") => args.extend(["--db".into(), fill("{DB}")]),
        _ => {}
    }
    let case_before = snapshot(&case.root);
    let fixtures_before = snapshot(&fixtures.root);
    let mounts_before = [mount_points_under(&case.root), mount_points_under(&fixtures.root)];
    let loops_before = super::harness::loops_under(&fixtures.root);

    let mut cmd = super::harness::fsarena();
    cmd.args(&args).current_dir(case.path("cwd"));
    let played = play(cmd, LIMIT);

    let mut problems = Vec::new();
    match played.code() {
        Ok(2) => {}
        Ok(c) => problems.push(format!("exit {c}, not 2")),
        Err(how) => problems.push(how),
    }
    let err = played.err();
    // One line, or a job file's problems one per line and then their count (at most 20).
    let lines: Vec<&str> = err.trim().lines().collect();
    let counted = lines.len() > 1
        && lines.len() <= 21
        && lines.iter().all(|l| l.starts_with("fsarena: "))
        && lines.last().is_some_and(|l| l.contains(" problems in this job file"));
    if lines.len() != 1 && !counted {
        problems.push(format!("{} stderr lines, not 1", lines.len()));
    }
    if lines.iter().any(|l| l.len() > 4096) {
        problems.push(format!("a {}-byte stderr line is not a clear one", err.len()));
    }
    for want in &r.wants {
        let want = fill(want);
        if !err.contains(&want) {
            problems.push(format!("stderr lacks {}", quote(&want)));
        }
    }
    if !played.stdout.is_empty() {
        problems.push(format!("stdout is not empty: {}", quote(&played.out())));
    }
    problems.extend(speech_problems(&played));
    let changed = super::harness::diff(&case_before, &snapshot(&case.root));
    if !changed.is_empty() {
        problems.push(format!("changed the case directory: {}", changed.join("; ")));
    }
    // An active swap area (the devices fixture's swap.img) is the kernel's to write: it pages
    // out to it under memory pressure (seen in a loaded CI run), whatever fsarena does.
    let swap = format!("changed {} ", fixtures.root.join("swap.img").display());
    let changed: Vec<String> = super::harness::diff(&fixtures_before, &snapshot(&fixtures.root))
        .into_iter()
        .filter(|c| !c.starts_with(&swap))
        .collect();
    if !changed.is_empty() {
        problems.push(format!("changed the fixtures (maybe with a concurrent case): {}", changed.join("; ")));
    }
    if [mount_points_under(&case.root), mount_points_under(&fixtures.root)] != mounts_before {
        problems.push("mounted or unmounted something".into());
    }
    let loops: Vec<String> = super::harness::loops_under(&case.root);
    if !loops.is_empty() || super::harness::loops_under(&fixtures.root) != loops_before {
        problems.push(format!("attached or detached a loop device: {loops:?}"));
    }
    let procs = super::harness::processes_mentioning(&case.root.display().to_string());
    if !procs.is_empty() {
        problems.push(format!("left processes: {procs:?}"));
    }
    if !problems.is_empty() {
        problems.push(format!("stderr: {}", quote(&err)));
    }
    problems
}

/// Creates a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// The items whose description holds `$HOSTILE_ONLY`, when it is set: to replay one case.
pub fn only<T>(items: Vec<T>, describe: impl Fn(&T) -> String) -> Vec<T> {
    match std::env::var("HOSTILE_ONLY") {
        Ok(f) => items.into_iter().filter(|i| describe(i).contains(&f)).collect(),
        Err(_) => items,
    }
}
